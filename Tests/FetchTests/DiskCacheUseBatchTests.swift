import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// The "used" records of disk hits are kept in memory and appended in batches: a hit costs no
/// journal write most times, and the access order still reaches the journal and other processes.
struct DiskCacheUseBatchTests {
    /// Entry files of about 9 KB each.
    func image(_ n: Int) -> [UInt8] { TestImages.png(size: 9_000, seed: n) }

    func journalSize(_ folder: TemporaryFolder) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: folder.file("journal"))[.size] as? Int ?? -1
    }

    @Test func hitsAppendTheirUsesInBatchesAndWhenTheCacheIsReleased() throws {
        let folder = TemporaryFolder()
        do {
            let cache = try DiskCache(folder: folder.path)
            for n in 0..<3 { try cache.store(image(n), for: testURL(n)) }
        }
        let start = try journalSize(folder)
        do {
            let cache = try DiskCache(folder: folder.path)
            for _ in 0..<63 { #expect(cache.image(for: testURL(0)) == image(0)) }
            #expect(try journalSize(folder) == start)  // 63 hits: nothing written yet
            #expect(cache.image(for: testURL(1)) == image(1))
            #expect(try journalSize(folder) == start + 64 * 32)  // the 64th: one write of 64 records
            for _ in 0..<10 { _ = cache.image(for: testURL(2)) }
            #expect(try journalSize(folder) == start + 64 * 32)
        }
        // Released: the 10 uses kept in memory are written.
        #expect(try journalSize(folder) == start + 74 * 32)
    }

    @Test func usesKeptInMemoryReachAnotherProcessWithTheNextStore() throws {
        let folder = TemporaryFolder()
        let reader = try DiskCache(folder: folder.path, capacity: 1 << 20)
        let other = try DiskCache(folder: folder.path, capacity: 30_500)
        for n in 0..<2 { try reader.store(image(n), for: testURL(n)) }
        #expect(reader.image(for: testURL(0)) == image(0))  // kept in memory…
        try reader.store(image(2), for: testURL(2))          // …and appended before this record
        // `other` reads the journal before it stores: 0 was used after 1 was stored, so 1 is
        // the least recently used, and the one evicted for 3.
        try other.store(image(3), for: testURL(3))
        #expect(other.counters.evictions == 1)
        #expect(!other.containsImage(at: testURL(1)))
        #expect(other.containsImage(at: testURL(0)) && other.containsImage(at: testURL(2)) && other.containsImage(at: testURL(3)))
    }
}
