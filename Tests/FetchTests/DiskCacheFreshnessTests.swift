import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport
import Support


/// Entries keep their HTTP freshness: stored, read back, refreshed in place after a 304,
/// entries of the format without freshness still read, `no-store` never written.
struct DiskCacheFreshnessTests {
    static let received = HTTPDate(parsing: "Mon, 23 Nov 2026 12:00:00 GMT")!

    func freshness(_ headers: [(name: String, value: String)], at time: HTTPDate = received) -> HTTPFreshness {
        HTTPFreshness(status: 200, headers: headers, receivedAt: time)
    }

    func fileBytes(_ path: String) throws -> [UInt8] { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }

    func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    /// Sets a file's modification time `seconds` ago.
    func age(_ path: String, by seconds: Int) {
        var times = [timespec(tv_sec: time(nil) - seconds, tv_nsec: 0), timespec(tv_sec: time(nil) - seconds, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test func anEntryKeepsItsFreshnessAcrossRestarts() throws {
        let folder = TemporaryFolder()
        let body = TestImages.png(size: 3000, seed: 1)
        let stored = freshness([("ETag", #""v1""#), ("Last-Modified", "Mon, 23 Nov 2026 11:00:00 GMT"), ("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", "Mon, 23 Nov 2026 12:00:00 GMT")])
        do {
            let cache = try DiskCache(folder: folder.path)
            #expect(try cache.store(body, for: testURL(1), freshness: stored) == .stored)
        }
        let cache = try DiskCache(folder: folder.path)
        let read = try #require(cache.storedImage(for: testURL(1)))
        #expect(read == StoredImage(bytes: body, freshness: stored, hasFreshnessRecord: true))
        #expect(cache.freshness(of: testURL(1)) == stored)
        #expect(cache.image(for: testURL(1)) == body)
        #expect(cache.freshness(of: testURL(2)) == nil)
        // Listing (`cache list`) reads the new header too.
        let size = try fileBytes(cache.entryPath(for: testURL(1))).count
        #expect(cache.entries().map { "\($0.url) \($0.size)" } == ["\(testURL(1)) \(size)"])
    }

    @Test func aStaleEntryStillCountsAsCached() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1), freshness: freshness([("Cache-Control", "max-age=0")]))
        #expect(cache.freshness(of: testURL(1))?.state(at: .now()) == .stale(withinStaleWhileRevalidate: false))
        #expect(cache.containsImage(at: testURL(1)))
        #expect(cache.image(for: testURL(1)) == TestImages.png())
    }

    @Test(arguments: [(ageInDays: 1, fresh: true), (ageInDays: 8, fresh: false)])
    func anEntryWithoutFreshnessIsFreshForTheDefaultLifetimeFromItsWriteTime(ageInDays: Int, fresh: Bool) throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        // Written as before entries kept their freshness: format 1, byte for byte.
        let body = TestImages.png(size: 2000)
        try cache.store(body, for: testURL(1))
        let path = cache.entryPath(for: testURL(1))
        #expect(try fileBytes(path) == DiskCacheEntry.encode(body: body, url: Array(testURL(1).absoluteString.utf8)))
        #expect(try fileBytes(path).prefix(8).elementsEqual("IMGPC001".utf8))
        age(path, by: ageInDays * 86_400)
        let read = try #require(try DiskCache(folder: folder.path).storedImage(for: testURL(1)))
        #expect(read.bytes == body && !read.hasFreshnessRecord)
        #expect(read.freshness.conditionalHeaders.isEmpty)
        #expect((read.freshness.state(at: .now()) == .fresh) == fresh)
        #expect(try DiskCache(folder: folder.path).freshness(of: testURL(1)) == read.freshness)
    }

    @Test func aRefreshRewritesOnlyTheFreshnessNeverTheBody() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let body = TestImages.png(size: 5000, seed: 2)
        try cache.store(body, for: testURL(1), freshness: freshness([("ETag", #""v1""#), ("Cache-Control", "max-age=60")]))
        let path = cache.entryPath(for: testURL(1))
        let before = try fileBytes(path)
        let node = inode(path)
        // Three 304s in a row: the two slots take turns; each renewed freshness is read back.
        for round in 1...3 {
            let later = Self.received.adding(Int64(round) * 3600)
            let renewed = try #require(try cache.revalidated(testURL(1), notModified: [("ETag", #""v1""#), ("Cache-Control", "max-age=\(round * 100)")], receivedAt: later))
            #expect(renewed.bytes == body)
            #expect(renewed.freshness.maxAge == Int64(round * 100) && renewed.freshness.receivedAt == later)
            #expect(try DiskCache(folder: folder.path).storedImage(for: testURL(1)) == renewed)
            let after = try fileBytes(path)
            #expect(inode(path) == node, "the entry was not rewritten")
            #expect(after.count == before.count && after.suffix(body.count).elementsEqual(body))
            #expect(after.prefix(DiskCacheEntry.headerSize).elementsEqual(before.prefix(DiskCacheEntry.headerSize)))
        }
    }

    @Test func aRefreshTornByACrashLeavesThePreviousFreshness() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let body = TestImages.png(size: 3000, seed: 3)
        let first = freshness([("ETag", #""v1""#), ("Cache-Control", "max-age=60")])
        try cache.store(body, for: testURL(1), freshness: first)
        let path = cache.entryPath(for: testURL(1))
        let second = try #require(first.refreshed(byNotModified: [("Cache-Control", "max-age=600")], receivedAt: Self.received.adding(100)))
        #expect(try cache.refreshFreshness(of: testURL(1), to: second))
        // The second slot holds the new record: tear it (a crash in the middle of its write).
        var bytes = try fileBytes(path)
        let layout = try #require(bytes.withUnsafeBytes { DiskCacheEntry.layout(header: $0, fileSize: bytes.count) })
        bytes[layout.slotsOffset + layout.slotSize + 30] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(cache.storedImage(for: testURL(1)) == StoredImage(bytes: body, freshness: first))
        // Both slots damaged: not an intact entry, a miss, removed.
        bytes[layout.slotsOffset + 30] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(cache.storedImage(for: testURL(1)) == nil)
        #expect(!FileManager.default.fileExists(atPath: path) && !cache.containsImage(at: testURL(1)))
    }

    @Test func aRefreshOfAnEntryWithoutFreshnessOrWithALongerTagRewritesItWhole() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let body = TestImages.png(size: 3000, seed: 4)
        try cache.store(body, for: testURL(1))  // format 1
        let renewed = freshness([("ETag", #""v1""#), ("Cache-Control", "max-age=60")])
        #expect(try cache.refreshFreshness(of: testURL(1), to: renewed))
        #expect(cache.storedImage(for: testURL(1)) == StoredImage(bytes: body, freshness: renewed, hasFreshnessRecord: true))
        let longer = freshness([("ETag", "\"" + String(repeating: "x", count: 900) + "\"")])
        #expect(try cache.refreshFreshness(of: testURL(1), to: longer))
        #expect(cache.storedImage(for: testURL(1)) == StoredImage(bytes: body, freshness: longer))
        let size = try fileBytes(cache.entryPath(for: testURL(1))).count
        #expect(cache.statistics.count == 1 && cache.statistics.bytes == size)
        #expect(try !cache.refreshFreshness(of: testURL(2), to: renewed))  // no entry: nothing written
        #expect(!FileManager.default.fileExists(atPath: cache.entryPath(for: testURL(2))))
    }

    @Test func noStoreIsNeverWrittenAndRemovesTheOlderEntry() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1), freshness: freshness([("ETag", #""v1""#)]))
        #expect(try cache.store(TestImages.png(seed: 2), for: testURL(1), freshness: freshness([("Cache-Control", "no-store")])) == .forbidden)
        #expect(try cache.store(TestImages.png(seed: 2), for: testURL(2), freshness: freshness([("Cache-Control", "max-age=60, NO-STORE")])) == .forbidden)
        #expect(try cache.store(TestImages.png(seed: 2), for: testURL(3), freshness: HTTPFreshness(status: 206, headers: [], receivedAt: Self.received)) == .forbidden)
        #expect(!cache.containsImage(at: testURL(1)) && !cache.containsImage(at: testURL(2)) && !cache.containsImage(at: testURL(3)))
        #expect(cache.statistics.count == 0)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.count == 35 }.isEmpty)
        #expect(cache.counters.refusedNoStore == 3)
        // A 304 that says no-store: the entry goes (the caller still has the bytes it read).
        try cache.store(TestImages.png(), for: testURL(4), freshness: freshness([("ETag", #""v1""#)]))
        let shown = try cache.revalidated(testURL(4), notModified: [("ETag", #""v1""#), ("Cache-Control", "no-store")], receivedAt: Self.received)
        #expect(shown?.bytes == TestImages.png() && shown?.freshness.noStore == true)
        #expect(!cache.containsImage(at: testURL(4)))
    }

    @Test func aNotModifiedThatDoesNotMatchOrHasNoEntryGivesNothing() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let stored = freshness([("ETag", #""v1""#), ("Cache-Control", "max-age=60")])
        try cache.store(TestImages.png(), for: testURL(1), freshness: stored)
        #expect(try cache.revalidated(testURL(1), notModified: [("ETag", #""v2""#)], receivedAt: Self.received) == nil)
        #expect(cache.storedImage(for: testURL(1)) == StoredImage(bytes: TestImages.png(), freshness: stored))  // untouched
        #expect(try cache.revalidated(testURL(2), notModified: [("ETag", #""v1""#)], receivedAt: Self.received) == nil)
        #expect(!cache.containsImage(at: testURL(2)))
    }

    @Test func aFIFOInPlaceOfAnEntryIsNeverOpenedByAFreshnessReadOrRefresh() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1), freshness: freshness([("ETag", #""v1""#)]))
        let path = cache.entryPath(for: testURL(1))
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        let answers = LockedList<Bool>()
        #expect(completes {
            answers.append(cache.freshness(of: testURL(1)) == nil)
            answers.append((try? cache.refreshFreshness(of: testURL(1), to: HTTPFreshness(storedAt: .now()))) == false)
        })
        #expect(answers.values == [true, true])
        #expect(!FileManager.default.fileExists(atPath: path) && !cache.containsImage(at: testURL(1)))
    }

    @Test func randomBytesInAFormat2EntryNeverTrap() throws {
        let url = testURL(7)
        let body = TestImages.png(size: 300, seed: 3)
        let good = DiskCacheEntry.encode(body: body, url: Array(url.absoluteString.utf8),
                                         freshness: freshness([("ETag", #""abc""#), ("Cache-Control", "max-age=60")]))
        #expect(DiskCache.body(of: good, for: url) == body)
        var generator = SeededGenerator(seed: 9, label: "random bytes in freshness slots")
        let slotsEnd = DiskCacheEntry.headerSize + url.absoluteString.utf8.count + 2 * 128
        for round in 0..<5_000 {
            var file = good
            if round % 7 == 0 {
                file = (0..<Int.random(in: 0..<600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                file.replaceSubrange(0..<min(8, file.count), with: Array("IMGPC002".utf8).prefix(min(8, file.count)))
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    file[Int.random(in: 8..<slotsEnd, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            let contents = DiskCacheEntry.contents(of: file, for: url)
            #expect(contents == nil || contents?.body == body)
            _ = DiskCacheEntry.decodeFreshness(Array(file.prefix(Int.random(in: 0...200, using: &generator))))
        }
    }
}

extension DiskCacheEntry.Contents: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.body == rhs.body && lhs.freshness == rhs.freshness }
}
