import Fetch
import FetchTesting
import Foundation
import Policy
import Testing
import TestSupport

/// "Is it cached?" (`CacheInspecting`) answers from memory only; entries of other processes become
/// visible through background reads of the journal, within `DiskCache.inspectionRefreshInterval`.
struct DiskCacheInspectionTests {
    @Test func inspectionTouchesNoFileEvenWhenTheFolderIsGone() throws {
        let parent = TemporaryFolder()
        let cache = try DiskCache(folder: parent.file("cache"))
        for n in 0..<3 { try cache.store(TestImages.png(seed: n), for: testURL(n)) }
        // Every miss may ask for a background read; the runner only counts the requests.
        let requests = LockedList<Int>()
        cache.setBackgroundRefresh(interval: .zero) { _ in requests.append(1) }
        let reads = cache.journalReads
        // The folder is gone: any file access would fail (or find nothing).
        try FileManager.default.moveItem(atPath: parent.file("cache"), toPath: parent.file("moved"))
        for _ in 0..<100 {
            #expect((0..<3).allSatisfy { cache.containsImage(at: testURL($0)) })
            #expect(!cache.containsImage(at: testURL(7)))
            #expect(cache.cachedVariants(of: ImageItem(id: "x", original: testURL(1), thumbnail: testURL(8))) == [.original])
        }
        #expect(cache.journalReads == reads)  // not one read of the journal on the asking thread
        #expect(requests.values.count == 1)    // one background read asked for (never run here)
        #expect(!FileManager.default.fileExists(atPath: parent.file("cache")))  // nothing created again
    }

    @Test func aMissAsksForOneBackgroundReadAtMostPerInterval() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let requests = LockedList<Int>()
        cache.setBackgroundRefresh(interval: .seconds(3600)) { run in
            requests.append(1)
            run()
        }
        for _ in 0..<50 { #expect(!cache.containsImage(at: testURL(1))) }
        #expect(requests.values.isEmpty)  // the journal was read when the cache opened: none is due
        let reads = cache.journalReads
        cache.setBackgroundRefresh(interval: .zero) { run in
            requests.append(1)
            run()
        }
        #expect(!cache.containsImage(at: testURL(1)))
        #expect(requests.values.count == 1 && cache.journalReads == reads + 1)
    }

    @Test func anEntryStoredByAnotherInstanceIsSeenAfterTheReadAMissStarts() throws {
        let folder = TemporaryFolder()
        let a = try DiskCache(folder: folder.path)
        let b = try DiskCache(folder: folder.path)
        a.setBackgroundRefresh(interval: .zero) { $0() }  // the read runs at once, in the asking thread
        try b.store(TestImages.png(), for: testURL(1))
        #expect(!a.containsImage(at: testURL(1)))  // answered from memory, before the read it starts
        #expect(a.containsImage(at: testURL(1)))   // after it
    }

    @Test func anEntryStoredByAnotherInstanceBecomesVisibleWithinTheInterval() throws {
        let folder = TemporaryFolder()
        let a = try DiskCache(folder: folder.path)  // the default: a thread of its own reads the journal
        let b = try DiskCache(folder: folder.path)
        try b.store(TestImages.png(), for: testURL(1))
        let stored = ContinuousClock.now
        #expect(!a.containsImage(at: testURL(1)))  // from memory: the journal was read at open
        // Asked as a list asks, every few milliseconds (this thread waits blocking, so that a busy
        // cooperative pool cannot stretch the gaps): seen within the interval plus one read of the
        // journal on a thread started for it; a second of slack for a loaded machine.
        var seen = false
        while !seen && ContinuousClock.now - stored < .seconds(10) {
            usleep(2_000)
            seen = a.containsImage(at: testURL(1))
        }
        let elapsed = ContinuousClock.now - stored
        #expect(seen)
        #expect(elapsed <= DiskCache.inspectionRefreshInterval + .seconds(1), "seen \(elapsed) after the store")
        #expect(a.journalReads >= 2)
    }

    @Test func thePipelineReadsWhatAnotherInstanceStoredInsteadOfDownloadingIt() async throws {
        let folder = TemporaryFolder()
        let downloader = ScriptedDownloader()
        let a = try DiskCache(folder: folder.path)
        let pipeline = ImagePipeline(downloader: downloader, disk: a)
        let b = try DiskCache(folder: folder.path)
        try b.store(TestImages.png(seed: 4), for: testURL(4))
        a.setBackgroundRefresh(interval: .zero, runner: { _ in })  // due now; no background read
        let image = try await pipeline.image(for: testURL(4))
        #expect(image.source == .disk && image.bytes == TestImages.png(seed: 4))
        #expect(downloader.requests.isEmpty)
    }
}

extension DiskCache {
    /// Makes every miss of "is it cached?" read the journal at once, in the asking thread, instead
    /// of on a thread of its own at most every `inspectionRefreshInterval` (tests only: so that a
    /// test sees another instance's records without waiting).
    func readsTheJournalOnEveryMiss() {
        setBackgroundRefresh(interval: .zero) { $0() }
    }

    /// "Is it cached?" as answered once the read of the journal that a miss starts has ended
    /// (with `readsTheJournalOnEveryMiss()`: at once).
    func containsImageAfterAMiss(at url: ImageURL) -> Bool {
        containsImage(at: url) || containsImage(at: url)
    }
}
