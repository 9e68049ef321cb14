import Fetch
import Foundation
import Policy
import Testing
import TestSupport

struct CacheTests {
    func url(_ n: Int) -> ImageURL { ImageURL("https://img.example/\(n).png")! }

    @Test func hashMatchesKnownMurmur3Values() {
        // MurmurHash3_x64_128 reference values (seed 0).
        #expect(Hash128(of: "").description == "00000000000000000000000000000000")
        #expect(Hash128(of: "hello").description == "cbd8a7b341bd9b025b1e906a48ae1d19")
        #expect(Hash128(of: "The quick brown fox jumps over the lazy dog").description == "e34bbc7bbc071b6c7a433ca9c49a9347")
        #expect(Hash128(hex: Hash128(of: "x").description) == Hash128(of: "x"))
    }

    @Test func memoryCacheEvictsLeastRecentlyUsedByBytes() {
        let cache = MemoryCache(capacity: 3000)
        for n in 0..<3 { cache.store(TestImages.png(size: 1000, seed: n), for: url(n)) }
        _ = cache.image(for: url(0))             // 0 is now the most recent; 1 the least
        cache.store(TestImages.png(size: 1000, seed: 3), for: url(3))
        #expect(cache.containsImage(at: url(0)))
        #expect(!cache.containsImage(at: url(1)))
        #expect(cache.containsImage(at: url(2)) && cache.containsImage(at: url(3)))
        #expect(cache.statistics.bytes == 3000)
        cache.store(TestImages.png(size: 5000), for: url(9))    // larger than the whole cache: not kept
        #expect(!cache.containsImage(at: url(9)))
        cache.purge()
        #expect(cache.statistics.count == 0 && cache.statistics.bytes == 0)
    }

    @Test func diskCacheRoundTripsAndIndexesWhatItHolds() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let image = TestImages.png(size: 5000)
        #expect(!cache.containsImage(at: url(1)))
        try cache.store(image, for: url(1))
        #expect(cache.containsImage(at: url(1)))
        #expect(cache.image(for: url(1)) == image)
        // A new instance (another process, a restart) finds it through its index.
        let reopened = try DiskCache(folder: folder.path)
        #expect(reopened.containsImage(at: url(1)))
        #expect(reopened.image(for: url(1)) == image)
        #expect(reopened.entries().map(\.url) == [url(1).absoluteString])
        // File names are hashes, spread over subfolders; nothing of the URL's path is used.
        let names = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.contains("/") && !$0.hasPrefix("tmp") }
        #expect(names.count == 1)
        #expect(names[0].split(separator: "/").last?.count == 32)
        #expect(!names[0].contains("png"))
    }

    @Test func urlsThatWouldEscapeOrCollideByNameStayApart() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let a = ImageURL("https://a.example/x/../../../../etc/image.png")!
        let b = ImageURL("https://b.example/y/image.png")!
        try cache.store(TestImages.png(seed: 1), for: a)
        try cache.store(TestImages.png(seed: 2), for: b)
        #expect(cache.image(for: a) == TestImages.png(seed: 1))
        #expect(cache.image(for: b) == TestImages.png(seed: 2))
        #expect(cache.statistics.count == 2)
    }

    @Test(arguments: ["truncated", "flipped", "other-url", "garbage", "empty"])
    func aDamagedEntryIsDetectedRemovedAndAMiss(_ damage: String) throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(size: 4000), for: url(1))
        let file = try #require(try FileManager.default.subpathsOfDirectory(atPath: folder.path).first { $0.count == 35 })
        let path = folder.path + "/" + file
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "truncated": bytes.removeLast(100)
        case "flipped": bytes[bytes.count - 10] ^= 0xFF
        case "other-url":
            bytes[bytes.count - 4000 - 2] = UInt8(ascii: "9")  // the stored URL's last digit: no longer this URL
        case "garbage": bytes = Array(repeating: 0x41, count: 300)
        default: bytes = []
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(cache.image(for: url(1)) == nil)
        #expect(!cache.containsImage(at: url(1)))
        #expect(!FileManager.default.fileExists(atPath: path) || damage == "empty")
    }

    @Test func diskCacheEvictsLeastRecentlyUsedPastItsCapacity() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path, capacity: 50_000)
        for n in 0..<8 { try cache.store(TestImages.png(size: 9_000, seed: n), for: url(n)) }
        #expect(cache.statistics.bytes <= 50_000)
        #expect(cache.containsImage(at: url(7)))
        #expect(!cache.containsImage(at: url(0)))
        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.count == 35 }
        #expect(onDisk.count == cache.statistics.count)
        cache.removeAll()
        #expect(cache.statistics.count == 0)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.count == 35 }.isEmpty)
    }

    @Test func concurrentWritersOfTheSameKeyLeaveOneWholeEntry() async throws {
        let folder = TemporaryFolder()
        let caches = try (0..<4).map { _ in try DiskCache(folder: folder.path) }
        let image = TestImages.png(size: 100_000)
        await withTaskGroup(of: Void.self) { group in
            for cache in caches {
                group.addTask { for _ in 0..<20 { try? cache.store(image, for: self.url(1)) } }
            }
        }
        #expect(try DiskCache(folder: folder.path).image(for: url(1)) == image)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/tmp").isEmpty)
    }
}
