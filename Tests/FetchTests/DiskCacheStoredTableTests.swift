import Fetch
import FetchTesting
import Foundation
import Policy
import Testing
import TestSupport

/// Opening leaves the journal's table in the file and checks it lazily (`DiskCacheIndex`,
/// `DiskCacheStoredTable`): lookups read only their probe run, a change reads and checks it whole,
/// a damaged record is never taken for an entry, and a journal shortened under it is no crash.
struct DiskCacheStoredTableTests {
    /// A cache of `count` entries whose journal holds a table (rebuilt from the folder: the
    /// journal was removed), and nothing after it.
    func cacheWithATable(_ folder: TemporaryFolder, count: Int) throws {
        do {
            let cache = try DiskCache(folder: folder.path)
            for n in 0..<count { try cache.store(TestImages.png(size: 300, seed: n), for: testURL(n)) }
        }
        try FileManager.default.removeItem(atPath: folder.file("journal"))
        _ = try DiskCache(folder: folder.path)  // rebuilds the journal: a table of every entry
    }

    @Test func lookupsAnswerFromTheTableInTheFileWithoutReadingItWhole() throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 200)
        let cache = try DiskCache(folder: folder.path)
        cache.setBackgroundRefresh(interval: .seconds(3600), runner: nil)  // no background copy here
        #expect(cache.indexIsLazy)
        #expect((0..<200).allSatisfy { cache.containsImage(at: testURL($0)) })
        #expect(!(200..<400).contains { cache.containsImage(at: testURL($0)) })
        #expect(cache.indexIsLazy)
        // A change copies and checks the table: the same answers, and the change.
        try cache.store(TestImages.png(size: 300, seed: 500), for: testURL(500))
        #expect(!cache.indexIsLazy)
        #expect((0..<200).allSatisfy { cache.containsImage(at: testURL($0)) } && cache.containsImage(at: testURL(500)))
        #expect(cache.statistics.count == 201)
    }

    @Test func recordsAppendedAfterTheTableCountWhileItIsLazy() throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 50)
        do {
            let b = try DiskCache(folder: folder.path)
            try b.store(TestImages.png(size: 300, seed: 70), for: testURL(70))
            b.remove(testURL(3))
        }
        let a = try DiskCache(folder: folder.path)  // the table, then b's two records
        a.setBackgroundRefresh(interval: .seconds(3600), runner: nil)
        #expect(a.indexIsLazy)
        #expect(a.containsImage(at: testURL(70)) && !a.containsImage(at: testURL(3)) && a.containsImage(at: testURL(4)))
        #expect(a.indexIsLazy)
        #expect(a.statistics.count == 50)  // copied now: the table, then the records in order
        #expect(!a.indexIsLazy && a.containsImage(at: testURL(70)) && !a.containsImage(at: testURL(3)))
    }

    @Test func aLongLivedCacheCopiesTheTableOnItsBackgroundRead() throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 50)
        let cache = try DiskCache(folder: folder.path)
        let requests = LockedList<Int>()
        cache.setBackgroundRefresh(interval: .zero) { work in
            requests.append(1)
            work()
        }
        #expect(cache.indexIsLazy)
        // A hit on a lazy table asks for the background read (due at once here), which copies it.
        #expect(cache.containsImage(at: testURL(1)))
        #expect(requests.values.count == 1 && !cache.indexIsLazy)
        #expect((0..<50).allSatisfy { cache.containsImage(at: testURL($0)) } && !cache.containsImage(at: testURL(99)))
    }

    @Test func aDamagedTableRecordIsNeverTakenForAnEntry() throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 100)
        // Damage the check of entry 7's record in the table.
        var journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.file("journal"))))
        let key = Hash128(of: testURL(7).absoluteString)
        var needle: [UInt8] = []
        withUnsafeBytes(of: key.high.littleEndian) { needle += $0 }
        withUnsafeBytes(of: key.low.littleEndian) { needle += $0 }
        let offset = try #require(stride(from: 32, to: journal.count - 32, by: 32).first { Array(journal[$0..<$0 + 16]) == needle })
        journal[offset + 28] ^= 0xFF
        try Data(journal).write(to: URL(fileURLWithPath: folder.file("journal")))
        let cache = try DiskCache(folder: folder.path)
        cache.setBackgroundRefresh(interval: .seconds(3600), runner: nil)
        #expect(cache.indexIsLazy)
        // The lookup meets the damaged record: the table is copied and checked whole, fails, and
        // is rebuilt from its valid records; 7 is not taken as cached on the damaged record's word.
        #expect(!cache.containsImage(at: testURL(7)))
        #expect(!cache.indexIsLazy)
        #expect((0..<100).filter { $0 != 7 }.allSatisfy { cache.containsImage(at: testURL($0)) })
        // Its file is intact: a read serves it, checked whole, and indexes it again.
        #expect(cache.image(for: testURL(7)) == TestImages.png(size: 300, seed: 7))
        #expect(cache.containsImage(at: testURL(7)))
    }

    /// Another program shortens the journal under a lazy table (the cache never does): with a
    /// mapping, the next lookup would die of SIGBUS. Lookups go on (a probe run that cannot be read
    /// is damage: the table is read whole, what is left rebuilt), nothing is taken as cached that
    /// the table no longer says, and every entry's file is still served, checked whole.
    @Test func aJournalShortenedUnderALazyTableIsNoCrash() throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 300)
        let cache = try DiskCache(folder: folder.path)
        cache.setBackgroundRefresh(interval: .seconds(3600), runner: nil)
        #expect(cache.indexIsLazy)
        #expect(cache.containsImage(at: testURL(1)))
        // Keep the header and two table records.
        #expect(truncate(folder.file("journal"), 96) == 0)
        let answers = (0..<300).map { cache.containsImage(at: testURL($0)) }
        #expect(!cache.indexIsLazy)
        #expect(answers.filter { $0 }.count <= 3)
        for n in [0, 150, 299] {
            #expect(cache.image(for: testURL(n)) == TestImages.png(size: 300, seed: n))
        }
    }

    /// A pipeline is a long-lived owner: made on a cache whose table is still in the file, it has
    /// the table read into memory on a thread of its own at once, not at the first miss.
    @Test func aPipelineHasTheTableReadIntoMemoryWhenItIsMade() async throws {
        let folder = TemporaryFolder()
        try cacheWithATable(folder, count: 50)
        let cache = try DiskCache(folder: folder.path)
        cache.setBackgroundRefresh(interval: .seconds(3600), runner: nil)  // no read on a lookup
        #expect(cache.indexIsLazy)
        let pipeline = ImagePipeline(downloader: ScriptedDownloader(), disk: cache)
        #expect(await waitUntil { !cache.indexIsLazy })
        #expect((0..<50).allSatisfy { pipeline.disk!.containsImage(at: testURL($0)) })
    }
}
