import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// The journal: access order across restarts, opening without a scan, entries of other processes.
struct DiskCacheIndexTests {
    /// Entry files of about 9 KB each.
    func image(_ n: Int) -> [UInt8] { TestImages.png(size: 9_000, seed: n) }

    @Test func readsCountAsUsesAcrossRestarts() throws {
        let folder = TemporaryFolder()
        do {
            let cache = try DiskCache(folder: folder.path, capacity: 30_500)
            for n in 0..<3 { try cache.store(image(n), for: testURL(n)) }
        }
        do {
            // After a restart, 0 is read: it is now the most recently used, 1 the least.
            #expect(try DiskCache(folder: folder.path, capacity: 30_500).image(for: testURL(0)) == image(0))
        }
        let cache = try DiskCache(folder: folder.path, capacity: 30_500)
        try cache.store(image(3), for: testURL(3))
        #expect(cache.containsImage(at: testURL(0)))
        #expect(!cache.containsImage(at: testURL(1)))
        #expect(cache.containsImage(at: testURL(2)) && cache.containsImage(at: testURL(3)))
        #expect(!FileManager.default.fileExists(atPath: cache.entryPath(for: testURL(1))))
    }

    @Test func aBodyLargerThanTheCapacityOrTheLargestEntryIsNotStoredAndEvictsNothing() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path, capacity: 30_000, largestEntry: 12_000)
        for n in 0..<2 { try cache.store(image(n), for: testURL(n)) }
        try cache.store(TestImages.png(size: 40_000), for: testURL(8))   // larger than the capacity
        try cache.store(TestImages.png(size: 15_000), for: testURL(9))   // larger than the largest entry
        #expect(!cache.containsImage(at: testURL(8)) && !cache.containsImage(at: testURL(9)))
        #expect(cache.containsImage(at: testURL(0)) && cache.containsImage(at: testURL(1)))
        #expect(cache.counters.oversizedSkipped == 2)
        #expect(cache.counters.evictions == 0)
    }

    @Test func openingReadsTheJournalNotEveryFile() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        for n in 0..<50 { try cache.store(TestImages.png(size: 100, seed: n), for: testURL(n)) }
        // Removed behind the cache's back: a reopened cache still lists it (nothing was stat'ed),
        // and finds out on the read, which removes it from the index (and the journal).
        try FileManager.default.removeItem(atPath: cache.entryPath(for: testURL(7)))
        let reopened = try DiskCache(folder: folder.path)
        #expect(reopened.statistics.count == 50)
        #expect(reopened.containsImage(at: testURL(7)))
        #expect(reopened.image(for: testURL(7)) == nil)
        #expect(!reopened.containsImage(at: testURL(7)))
        #expect(try DiskCache(folder: folder.path).statistics.count == 49)
    }

    @Test(arguments: ["garbage", "empty", "missing", "fifo", "torn", "table"])
    func aDamagedOrMissingJournalIsRebuiltFromTheFolder(_ damage: String) throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        for n in 0..<5 { try cache.store(TestImages.png(size: 100, seed: n), for: testURL(n)) }
        let journal = folder.file("journal")
        switch damage {
        case "garbage": try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: URL(fileURLWithPath: journal))
        case "empty": try Data().write(to: URL(fileURLWithPath: journal))
        case "missing": try FileManager.default.removeItem(atPath: journal)
        case "fifo":
            try FileManager.default.removeItem(atPath: journal)
            #expect(mkfifo(journal, 0o600) == 0)
        case "table":
            // A damaged record in the stored table: the table is rebuilt from its valid records.
            try FileManager.default.removeItem(atPath: journal)
            _ = try DiskCache(folder: folder.path)  // writes the table of the 5 entries
            var file = try bytes(at: journal)
            let slot = try #require(stride(from: 32, to: file.count, by: 32).first { file[$0..<$0 + 32].contains { $0 != 0 } })
            file[slot] ^= 0xFF
            try Data(file).write(to: URL(fileURLWithPath: journal))
        default:
            // A record torn by a crash, then records appended after it stay readable.
            let handle = try #require(FileHandle(forWritingAtPath: journal))
            handle.seekToEndOfFile()
            handle.write(Data([1, 2, 3, 4, 5]))
            try handle.close()
            try cache.store(TestImages.png(size: 100, seed: 5), for: testURL(5))
        }
        let expected = damage == "torn" ? 6 : damage == "table" ? 4 : 5
        let result = LockedList<Int>()
        #expect(completes { result.append((try? DiskCache(folder: folder.path).statistics.count) ?? -1) })
        #expect(result.values == [expected])
        let reopened = try DiskCache(folder: folder.path)
        let readable = (0..<5).filter { reopened.image(for: testURL($0)) == TestImages.png(size: 100, seed: $0) }
        #expect(readable.count == 5)  // every entry file is still there, and read (and indexed again) when asked for
    }

    @Test func theJournalIsCompactedAndKeepsTheAccessOrder() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path, capacity: 30_500)
        for n in 0..<3 { try cache.store(image(n), for: testURL(n)) }
        // 10,000 reads: the journal is compacted as it goes (it never holds more than the table and
        // 4,096 + entries / 8 records).
        var largest = 0
        for _ in 0..<5_000 {
            _ = cache.image(for: testURL(0))
            _ = cache.image(for: testURL(2))
            largest = max(largest, try FileManager.default.attributesOfItem(atPath: folder.file("journal"))[.size] as? Int ?? 0)
        }
        #expect(largest > 4_000 * 32 && largest <= 32 * (1 + 16 + 4_097))
        try cache.store(TestImages.png(size: 100), for: testURL(9))
        let reopened = try DiskCache(folder: folder.path, capacity: 30_500)
        try reopened.store(image(3), for: testURL(3))
        #expect(!reopened.containsImage(at: testURL(1)))   // the least recently used, still
        #expect(reopened.containsImage(at: testURL(0)) && reopened.containsImage(at: testURL(2)))
    }

    @Test func twoInstancesSeeEachOthersWritesAndRemovals() throws {
        let folder = TemporaryFolder()
        let a = try DiskCache(folder: folder.path)
        let b = try DiskCache(folder: folder.path)
        a.readsTheJournalOnEveryMiss()
        b.readsTheJournalOnEveryMiss()
        try a.store(TestImages.png(), for: testURL(1))
        #expect(b.containsImageAfterAMiss(at: testURL(1)))
        b.remove(testURL(1))
        try b.store(TestImages.png(), for: testURL(2))
        #expect(a.containsImageAfterAMiss(at: testURL(2)))  // the read a miss starts: 1's removal too
        #expect(!a.containsImage(at: testURL(1)))
    }

    @Test func theCapacityCountsWhatOtherProcessesStored() throws {
        let folder = TemporaryFolder()
        let a = try DiskCache(folder: folder.path, capacity: 30_500)
        let b = try DiskCache(folder: folder.path, capacity: 30_500)
        for n in 0..<2 { try a.store(image(n), for: testURL(n)) }
        try b.store(image(2), for: testURL(2))
        try a.store(image(3), for: testURL(3))  // four entries of about 9 KB: one must go
        #expect(a.counters.evictions == 1)
        #expect(!a.containsImage(at: testURL(0)))
        #expect(try DiskCache(folder: folder.path).statistics.bytes <= 30_500)
    }

    @Test func aWriteAfterAnotherInstanceCompactedTheJournalIsNotLost() throws {
        let folder = TemporaryFolder()
        let a = try DiskCache(folder: folder.path)
        let b = try DiskCache(folder: folder.path)
        a.readsTheJournalOnEveryMiss()
        try a.store(TestImages.png(), for: testURL(1))
        for _ in 0..<4_200 { _ = a.image(for: testURL(1)) }
        try a.store(TestImages.png(), for: testURL(2))  // compacts: a new journal file
        try b.store(TestImages.png(), for: testURL(3))  // b still had the old one open
        #expect(a.containsImageAfterAMiss(at: testURL(3)))
        #expect(b.containsImage(at: testURL(1)) && b.containsImage(at: testURL(2)))
        #expect(try DiskCache(folder: folder.path).statistics.count == 3)
        #expect(a.counters.writeFailures == 0 && b.counters.writeFailures == 0)
    }

    @Test func instancesStoringReadingAndEvictingAtOnceStayConsistent() async throws {
        let folder = TemporaryFolder()
        let caches = try (0..<4).map { _ in try DiskCache(folder: folder.path, capacity: 200_000) }
        // Threads of their own: blocking disk work must not hold the cooperative pool (2 threads
        // on a 2-core machine) that the other tests' tasks need.
        let finished = LockedList<Int>()
        let images = (0..<60).map { TestImages.png(size: 2_000 + $0 * 50, seed: $0) }
        var seeds = SeededGenerator(seed: 0x1D3C_0004, label: "4 instances sharing a folder")
        for (number, cache) in caches.enumerated() {
            let seed = seeds.next()   // each thread's own sequence, drawn from the printed seed
            Thread.detachNewThread {
                var generator = SeededGenerator(seed: seed)
                for _ in 0..<400 {
                    let n = Int.random(in: 0..<60, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0, 1: try? cache.store(images[n], for: testURL(n))
                    case 2: if let image = cache.image(for: testURL(n)) { #expect(image == images[n]) }
                    default: cache.remove(testURL(n))
                    }
                }
                finished.append(number)
            }
        }
        #expect(await waitUntil(timeout: .seconds(60)) { finished.values.count == 4 })
        let reopened = try DiskCache(folder: folder.path, capacity: 200_000)
        // Each instance may have stored one entry (at most 5 KB) that another had not yet seen.
        #expect(reopened.statistics.bytes <= 200_000 + 4 * 5_100)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("tmp")).isEmpty)
        for n in 0..<60 where reopened.containsImage(at: testURL(n)) {
            let image = reopened.image(for: testURL(n))
            #expect(image == nil || image == images[n])
        }
        #expect(caches.allSatisfy { $0.counters.writeFailures == 0 && $0.counters.damagedRemoved == 0 })
    }

    @Test func anEntryFetchedByAnotherProcessBecomesVisibleToALongLivedCache() throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 20_000, seed: 1))])
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.file("cache"))
        cache.readsTheJournalOnEveryMiss()
        let original = try #require(ImageURL(server.url("/o.png")))
        #expect(!cache.containsImage(at: original))
        let item = try folder.write(#"{"id": "x", "original": "\#(original)"}"#, to: "item.json")
        let fetch = try ProcessResult.run(PackagePaths.executable, ["--item", item, "--network", "wifi", "--fetch", "--cache-dir", folder.file("cache")],
                                          environment: ["HOME": folder.path, "XDG_CONFIG_HOME": folder.file("config")])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(cache.containsImageAfterAMiss(at: original))
        #expect(cache.image(for: original) == TestImages.png(size: 20_000, seed: 1))
    }

    /// The figures of the README (docs/disk-cache.md, "Opening time"): `swift build -c release &&
    /// IMGPOLICY_CACHE_BENCH=1 IMGPOLICY_CACHE_BENCH_EXECUTABLE=.build/release/imgpolicy swift
    /// test --skip-build --filter openingFigures` (builds a 100,000-entry cache, then runs a plain
    /// decision against it and against an empty folder, each a new process, in turn, 9 rounds:
    /// the medians and min–max). `IMGPOLICY_CACHE_BENCH_BASELINE=path/to/other/imgpolicy` times
    /// another build in the same rounds (e.g. the revision before a change), and
    /// `IMGPOLICY_CACHE_BENCH_FOLDER=DIR` keeps the 100,000-entry cache there for the next run.
    /// Skipped otherwise: building the cache takes about a minute.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["IMGPOLICY_CACHE_BENCH"] == "1", "set IMGPOLICY_CACHE_BENCH=1 for the open-time figures"))
    func openingFigures() throws {
        let environment = ProcessInfo.processInfo.environment
        let folder = TemporaryFolder()
        let big = environment["IMGPOLICY_CACHE_BENCH_FOLDER"] ?? folder.file("big"), empty = folder.file("empty")
        let count = 100_000
        let body = TestImages.png(size: 200)
        do {
            let cache = try DiskCache(folder: big, capacity: 1 << 34)
            if cache.statistics.count < count {
                for n in 0..<count { try cache.store(body, for: testURL(n)) }
            }
        }
        // An empty folder (the command does not open it) and an empty cache (marker, journal, tmp/: opened).
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let emptyCache = folder.file("empty-cache")
        _ = try DiskCache(folder: emptyCache)
        let folders = [big, empty, emptyCache]
        func milliseconds(_ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
        }
        let item = try folder.write(#"{"id": "x", "original": "https://img.example/1.png", "thumbnail": "https://img.example/t.png"}"#, to: "item.json")
        // IMGPOLICY_CACHE_BENCH_EXECUTABLE: time another build (e.g. .build/release/imgpolicy).
        var executables = [environment["IMGPOLICY_CACHE_BENCH_EXECUTABLE"] ?? PackagePaths.executable]
        if let baseline = environment["IMGPOLICY_CACHE_BENCH_BASELINE"] { executables.append(baseline) }
        func decide(_ executable: String, _ cacheDir: String) throws -> Double {
            try milliseconds {
                let result = try ProcessResult.run(executable, ["--item", item, "--network", "cellular", "--cache-dir", cacheDir],
                                                   environment: ["HOME": folder.path, "XDG_CONFIG_HOME": folder.file("config")])
                #expect(result.status == 0)
            }
        }
        // One series per build and folder; which goes first turns with the round.
        let series = executables.flatMap { executable in folders.map { (executable, $0) } }
        var times = [[Double]](repeating: [], count: series.count)
        for round in 0..<9 {
            for turn in series.indices {
                let which = (turn + round) % series.count
                times[which].append(try decide(series[which].0, series[which].1))
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func summary(_ values: [Double]) -> String {
            String(format: "median %.1f ms (%.1f–%.1f)", median(values), values.min()!, values.max()!)
        }
        var report = ""
        for (number, executable) in executables.enumerated() {
            let big = times[number * 3], empty = times[number * 3 + 1], emptyCache = times[number * 3 + 2]
            report += "decision (\(executable)), 9 processes each, in turn:\n"
            report += "  \(count) entries: \(summary(big))\n  empty folder: \(summary(empty))\n  empty cache: \(summary(emptyCache))\n"
            report += String(format: "  100,000 entries minus empty folder (medians): %.1f ms (goal: at most 10); minus empty cache: %.1f ms\n",
                             median(big) - median(empty), median(big) - median(emptyCache))
        }
        var load = [Double](repeating: 0, count: 3)
        _ = getloadavg(&load, 3)
        print(report + String(format: "load average %.1f", load[0]))
        let cache = try DiskCache(folder: big, capacity: 1 << 34)
        var hits = Double.infinity, reads = Double.infinity
        for _ in 0..<5 {
            hits = min(hits, milliseconds { for n in 0..<10_000 { _ = cache.containsImage(at: testURL(n)) } })
            reads = min(reads, milliseconds { for n in 0..<1_000 { _ = cache.image(for: testURL(n)) } })
        }
        print("containsImage hit (this test build): \(hits / 10_000 * 1e6) ns; image(for:) hit incl. journal append: \(reads / 1_000 * 1e3) µs")
    }
}
