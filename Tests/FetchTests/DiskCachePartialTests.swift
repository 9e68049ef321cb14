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


/// Partial bodies of interrupted transfers: kept, resumed, completed, bounded, never torn, never
/// followed through a planted link.
struct DiskCachePartialTests {
    static let limits = DiskCache.PartialLimits(minimumBytes: 1_000, largest: 100_000, totalBytes: 250_000, lifetime: 3_600)

    func body(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    func cache(_ folder: TemporaryFolder, capacity: Int = 10 << 20, limits: DiskCache.PartialLimits = limits) throws -> DiskCache {
        try DiskCache(folder: folder.path, capacity: capacity, partialLimits: limits)
    }

    func partialPath(_ folder: TemporaryFolder, _ url: ImageURL) -> String {
        folder.path + "/partial/" + Hash128(of: url.absoluteString).description
    }

    func setModified(_ path: String, secondsAgo: Int) {
        var times = [timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0), timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
    }

    @Test func aPartialBodyIsKeptResumedAndCompleted() throws {
        let folder = TemporaryFolder()
        let whole = body(60_000)
        do {
            let cache = try cache(folder)
            #expect(try cache.savePartial(Array(whole[..<20_000]), for: testURL(1), validator: #""v1""#, totalLength: 60_000))
        }
        // Another process (a new instance) resumes: Range from 20,000 with If-Range.
        let cache = try cache(folder)
        #expect(cache.partialStatistics.count == 1)
        let partial = try #require(cache.partial(for: testURL(1)))
        #expect(partial == PartialBody(bytes: Array(whole[..<20_000]), validator: #""v1""#, totalLength: 60_000))
        #expect(partial.resumeHeaders.map { "\($0.name): \($0.value)" } == ["Range: bytes=20000-", #"If-Range: "v1""#])
        // Interrupted again after 10,000 more bytes: appended.
        #expect(try cache.appendPartial(Array(whole[20_000..<30_000]), for: testURL(1), at: 20_000))
        #expect(try !cache.appendPartial(Array(whole[20_000..<30_000]), for: testURL(1), at: 20_000))  // not at its end
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<30_000]))
        // The 206 brings the rest: a normal entry, byte-exact, and the partial body is gone.
        let freshness = HTTPFreshness(status: 206, headers: [("ETag", #""v1""#)], receivedAt: .now())
        #expect(try cache.completePartial(for: testURL(1), rest: Array(whole[30_000...]), freshness: freshness) == whole)
        #expect(cache.image(for: testURL(1)) == whole)
        #expect(cache.storedImage(for: testURL(1))?.freshness.status == 200)
        #expect(cache.partial(for: testURL(1)) == nil && cache.partialStatistics.count == 0)
        #expect(!FileManager.default.fileExists(atPath: partialPath(folder, testURL(1))))
    }

    @Test func aRestOfTheWrongLengthIsNeverStoredAndDiscardsThePartial() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        let whole = body(60_000)
        try cache.savePartial(Array(whole[..<20_000]), for: testURL(1), validator: #""v1""#, totalLength: 60_000)
        #expect(try cache.completePartial(for: testURL(1), rest: Array(whole[20_000..<59_999]), freshness: HTTPFreshness(storedAt: .now())) == nil)
        #expect(!cache.containsImage(at: testURL(1)) && cache.partial(for: testURL(1)) == nil)
        #expect(try cache.completePartial(for: testURL(2), rest: whole, freshness: HTTPFreshness(storedAt: .now())) == nil)
    }

    struct RefusalCase: Sendable, CustomTestStringConvertible {
        var name: String
        var count: Int
        var validator: String
        var total: Int
        var testDescription: String { name }
    }

    @Test(arguments: [
        RefusalCase(name: "fewer bytes than the minimum", count: 999, validator: #""v""#, total: 5_000),
        RefusalCase(name: "no validator", count: 2_000, validator: "", total: 5_000),
        RefusalCase(name: "a validator with a line break", count: 2_000, validator: "\"v\"\r\nX-Evil: 1", total: 5_000),
        RefusalCase(name: "a validator longer than 1 KiB", count: 2_000, validator: String(repeating: "v", count: 1_025), total: 5_000),
        RefusalCase(name: "a total not above the bytes", count: 2_000, validator: #""v""#, total: 2_000),
        RefusalCase(name: "a total larger than the largest entry", count: 2_000, validator: #""v""#, total: 20 << 20),
    ])
    func whatIsNotWorthKeepingIsNotKept(_ scenario: RefusalCase) throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        #expect(try !cache.savePartial(body(scenario.count), for: testURL(1), validator: scenario.validator, totalLength: scenario.total))
        #expect(cache.partial(for: testURL(1)) == nil && cache.partialStatistics.count == 0)
    }

    @Test func aPartialBodyKeepsAtMostItsCap() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        let whole = body(300_000)
        #expect(try cache.savePartial(Array(whole[..<150_000]), for: testURL(1), validator: #""v""#, totalLength: 300_000))
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<100_000]))
        #expect(try !cache.appendPartial(Array(whole[100_000..<120_000]), for: testURL(1), at: 100_000))  // full
        try cache.savePartial(Array(whole[..<90_000]), for: testURL(1), validator: #""v""#, totalLength: 300_000)
        #expect(try cache.appendPartial(Array(whole[90_000..<120_000]), for: testURL(1), at: 90_000))
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<100_000]))
    }

    @Test func anExpiredPartialIsRemovedWhenReadAndWhenTheCacheOpens() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        for n in 1...2 { try cache.savePartial(body(5_000), for: testURL(n), validator: #""v""#, totalLength: 10_000) }
        setModified(partialPath(folder, testURL(1)), secondsAgo: 3_601)
        setModified(partialPath(folder, testURL(2)), secondsAgo: 3_601)
        #expect(cache.partial(for: testURL(1)) == nil)
        #expect(!FileManager.default.fileExists(atPath: partialPath(folder, testURL(1))))
        let reopened = try self.cache(folder)
        #expect(!FileManager.default.fileExists(atPath: partialPath(folder, testURL(2))))
        #expect(reopened.partialStatistics.count == 0 && reopened.counters.partialsRemoved == 1)
    }

    @Test func partialBodiesCountAgainstTheCapacityAndGoFirst() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder, capacity: 200_000, limits: .init(minimumBytes: 1_000, largest: 100_000, totalBytes: 150_000))
        try cache.store(body(50_000, seed: 9), for: testURL(9))
        try cache.savePartial(body(60_000, seed: 1), for: testURL(1), validator: #""a""#, totalLength: 100_000)
        try cache.savePartial(body(60_000, seed: 2), for: testURL(2), validator: #""b""#, totalLength: 100_000)
        #expect(cache.partialStatistics.count == 2 && cache.partialStatistics.bytes > 120_000)
        // A third partial: past the partials' own cap (150,000): the oldest goes.
        setModified(partialPath(folder, testURL(1)), secondsAgo: 10)
        _ = try self.cache(folder, capacity: 200_000, limits: .init(minimumBytes: 1_000, largest: 100_000, totalBytes: 150_000))
        let reopened = try self.cache(folder, capacity: 200_000, limits: .init(minimumBytes: 1_000, largest: 100_000, totalBytes: 150_000))
        try reopened.savePartial(body(60_000, seed: 3), for: testURL(3), validator: #""c""#, totalLength: 100_000)
        #expect(reopened.partial(for: testURL(1)) == nil)
        #expect(reopened.partial(for: testURL(2)) != nil && reopened.partial(for: testURL(3)) != nil)
        // An entry that takes the cache past its capacity: partial bodies go before any entry.
        try reopened.store(body(70_000, seed: 8), for: testURL(8))
        #expect(reopened.containsImage(at: testURL(9)) && reopened.containsImage(at: testURL(8)))
        // Down to 90 % of the capacity: both partial bodies (the entries alone are 120 KB).
        #expect(reopened.partial(for: testURL(2)) == nil && reopened.partial(for: testURL(3)) == nil)
        let total = reopened.statistics.bytes + reopened.partialStatistics.bytes
        #expect(total <= 200_000, "entries and partial bodies: \(total) bytes")
        #expect(reopened.counters.partialsRemoved == 3)
        // Clearing the cache removes partial bodies too.
        reopened.removeAll()
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.file("partial"))
        #expect(reopened.partialStatistics.count == 0 && left.isEmpty)
    }

    @Test func aTornPartialIsNeverServedAndItsTornEndIsCutAtTheNextAppend() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        let whole = body(90_000)
        try cache.savePartial(Array(whole[..<20_000]), for: testURL(1), validator: #""v""#, totalLength: 90_000)
        try cache.appendPartial(Array(whole[20_000..<40_000]), for: testURL(1), at: 20_000)
        let path = partialPath(folder, testURL(1))
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Torn in the middle of the second chunk: only the first is served.
        try Data(good.dropLast(5_000)).write(to: URL(fileURLWithPath: path))
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<20_000]))
        // A damaged byte in the second chunk: the same.
        var flipped = good
        flipped[flipped.count - 100] ^= 0x01
        try Data(flipped).write(to: URL(fileURLWithPath: path))
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<20_000]))
        // The next append goes after the first chunk, and the damaged one is gone.
        #expect(try cache.appendPartial(Array(whole[20_000..<50_000]), for: testURL(1), at: 20_000))
        #expect(cache.partial(for: testURL(1))?.bytes == Array(whole[..<50_000]))
        // A damaged header, another URL's file, or garbage: no partial at all, removed.
        for damage in 0..<3 {
            var bytes = good
            switch damage {
            case 0: bytes[9] ^= 0x01  // the total length
            case 1: bytes[bytes.count - 20_000 - 2 * DiskCachePartialFile.chunkHeaderSize - 2] ^= 0x01  // the URL's last byte
            default: bytes = Array(repeating: 0x41, count: 500)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(cache.partial(for: testURL(1)) == nil, "damage \(damage)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func randomBytesInAPartialNeverTrapNorServeAWrongByte() {
        let whole = body(3_000)
        let url = Array(testURL(1).absoluteString.utf8)
        let good = DiskCachePartialFile.header(totalLength: 9_000, validator: Array(#""v""#.utf8), url: url)
            + DiskCachePartialFile.chunks(whole[..<1_000], offset: 0) + DiskCachePartialFile.chunks(whole[1_000...], offset: 1_000)
        var generator = SeededGenerator(seed: 12, label: "random bytes in a partial")
        for round in 0..<3_000 {
            var file = good
            if round % 5 == 0 {
                file = Array(file.prefix(Int.random(in: 0...file.count, using: &generator)))
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    file[Int.random(in: 0..<file.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if let contents = DiskCachePartialFile.contents(of: file, for: url) {
                #expect(whole.starts(with: contents.body), "round \(round)")
            }
        }
    }

    @Test func aFIFOOrSymbolicLinkInPlaceOfAPartialIsRefusedAndNeverFollowed() throws {
        let folder = TemporaryFolder()
        let cache = try cache(folder)
        try cache.savePartial(body(5_000), for: testURL(9), validator: #""v""#, totalLength: 10_000)  // makes partial/
        // A FIFO: never opened (no read blocks), removed.
        let path = partialPath(folder, testURL(1))
        #expect(mkfifo(path, 0o600) == 0)
        let answers = LockedList<Bool>()
        #expect(completes {
            answers.append((try? cache.appendPartial(self.body(2_000), for: testURL(1), at: 0)) == false)
            answers.append(cache.partial(for: testURL(1)) == nil)
        })
        #expect(answers.values == [true, true])
        #expect(!FileManager.default.fileExists(atPath: path))
        // A symbolic link to a valid partial file elsewhere: not followed, removed; the target untouched.
        let outside = TemporaryFolder()
        let target = outside.file("victim")
        let valid = DiskCachePartialFile.header(totalLength: 10_000, validator: Array(#""v""#.utf8), url: Array(testURL(1).absoluteString.utf8))
            + DiskCachePartialFile.chunks(body(5_000)[...], offset: 0)
        try Data(valid).write(to: URL(fileURLWithPath: target))
        #expect(symlink(target, path) == 0)
        #expect(try !cache.appendPartial(body(2_000), for: testURL(1), at: 5_000))
        #expect(cache.partial(for: testURL(1)) == nil)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil)
        // A save over a planted link replaces the link, never writes through it.
        #expect(symlink(target, path) == 0)
        try cache.savePartial(body(3_000, seed: 5), for: testURL(1), validator: #""w""#, totalLength: 10_000)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))) == valid)
        #expect(cache.partial(for: testURL(1))?.bytes == body(3_000, seed: 5))
        // The partial folder itself a symbolic link: never entered; a save throws naming it.
        let other = TemporaryFolder()
        let linked = try self.cache(other)
        try FileManager.default.createDirectory(atPath: outside.file("elsewhere"), withIntermediateDirectories: true)
        #expect(symlink(outside.file("elsewhere"), other.file("partial")) == 0)
        #expect(throws: DiskCacheError.self) { try linked.savePartial(body(3_000), for: testURL(1), validator: #""v""#, totalLength: 10_000) }
        #expect(linked.partial(for: testURL(1)) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.file("elsewhere")).isEmpty)
    }
}
