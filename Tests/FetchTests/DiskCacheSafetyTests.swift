import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import InMemoryLogging
import Logging
import Policy
import Testing
import TestSupport

/// Whether the tests run as root (CI does): needed for device nodes, tmpfs mounts and `chattr`.
let runsAsRoot = getuid() == 0

/// A logger that keeps what it logs, and the handler to read it from.
func capturingLogger() -> (Logger, InMemoryLogHandler) {
    var handler = InMemoryLogHandler()
    handler.logLevel = .debug
    let logger = Logger(label: "test", factory: { [handler] _ in handler })
    return (logger, handler)
}

/// Runs `body` on a thread of its own and waits for it at most `seconds`: false when it is still
/// running then (it hangs).
func completes(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

func fileMode(_ path: String) -> mode_t {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode : 0
}

func bytes(at path: String) throws -> [UInt8] {
    try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
}

func testURL(_ n: Int) -> ImageURL { ImageURL("https://img.example/\(n).png")! }

/// Faults 1, 2, 4, 5, 8 and 10 of issue 6: what the cache does with files it did not write.
struct DiskCacheSafetyTests {
    // MARK: Fault 1: every field read from disk is untrusted

    @Test func aDamagedLengthFieldIsAMissRemovedAndLoggedNeverATrap() throws {
        let folder = TemporaryFolder()
        let (logger, log) = capturingLogger()
        let cache = try DiskCache(folder: folder.path, logger: logger)
        try cache.store(TestImages.png(size: 4000), for: testURL(1))
        let path = cache.entryPath(for: testURL(1))
        var file = try bytes(at: path)
        file[15] = 0x80  // the top byte of the body length: 2^63 and more
        try Data(file).write(to: URL(fileURLWithPath: path))
        #expect(cache.image(for: testURL(1)) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!cache.containsImage(at: testURL(1)))
        #expect(cache.counters.damagedRemoved == 1)
        #expect(log.entries.contains { $0.message.description.contains("damaged") && $0.metadata["path"]?.description == path })
    }

    @Test func randomBytesInTheHeaderOrTheWholeFileNeverTrap() throws {
        let url = testURL(7)
        let body = TestImages.png(size: 300, seed: 3)
        let good = DiskCacheEntry.encode(body: body, url: Array(url.absoluteString.utf8))
        #expect(DiskCache.body(of: good, for: url) == body)
        var generator = SeededGenerator(seed: 6, label: "random bytes in an entry")
        for round in 0..<5_000 {
            var file = good
            if round % 5 == 0 {
                file = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    file[Int.random(in: 8..<DiskCacheEntry.headerSize, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            let parsed = DiskCache.body(of: file, for: url)
            #expect(parsed == nil || parsed == body)
        }
    }

    // MARK: Fault 2: only its own files, in its own folders, no symbolic link followed

    @Test func aNonEmptyFolderWithoutTheMarkerIsRefusedAndUntouched() throws {
        let home = TemporaryFolder()
        try home.write("my notes", to: "notes.txt")
        try home.write("keep", to: "tmp/entry-abc123")
        try home.write("keep", to: "ab/ab34567890abcdef1234567890abcdef")
        #expect {
            try DiskCache(folder: home.path)
        } throws: { error in
            (error as? DiskCacheError)?.code == .notACache && (error as? DiskCacheError)?.path == home.path
        }
        #expect(try home.list() == ["ab", "notes.txt", "tmp"])
        #expect(try home.read("tmp/entry-abc123") == "keep")
        // The root folder is no cache either: nothing in /tmp is ever considered.
        #expect(throws: DiskCacheError.self) { try DiskCache(folder: "/") }
    }

    @Test func aNewOrEmptyFolderGetsTheMarkerAndAnEarlierVersionsLayoutIsAdopted() throws {
        let parent = TemporaryFolder()
        _ = try DiskCache(folder: parent.file("new/cache"))
        #expect(FileManager.default.fileExists(atPath: parent.file("new/cache/.imgpolicy-cache")))
        // An earlier version's cache: entries in their shards, temporaries in tmp/, its journal.
        let legacy = TemporaryFolder()
        _ = try DiskCache(folder: legacy.path).store(TestImages.png(), for: testURL(1))
        try FileManager.default.removeItem(atPath: legacy.file(".imgpolicy-cache"))
        try legacy.write("half", to: "tmp/entry-abc123")
        let cache = try DiskCache(folder: legacy.path)
        #expect(FileManager.default.fileExists(atPath: legacy.file(".imgpolicy-cache")))
        #expect(cache.image(for: testURL(1)) == TestImages.png())
    }

    /// Issue 6, tester's fault 1: a folder is adopted as an earlier cache only on strong evidence.
    @Test(arguments: ["journal-only", "locale-folders", "foreign-name-in-shard", "foreign-name-in-tmp", "journal-without-entries"])
    func aFolderWithoutStrongEvidenceOfACacheIsRefusedAndUntouched(_ layout: String) throws {
        let home = TemporaryFolder()
        let entryName = "ab34567890abcdef1234567890abcdef"
        let journalMagic = "IMGPOLICY-JOURNAL-2\n"
        switch layout {
        case "journal-only":
            try home.write("Dear diary", to: "journal")
        case "locale-folders":
            for locale in ["de", "ca", "be"] {
                try FileManager.default.createDirectory(atPath: home.file(locale), withIntermediateDirectories: true)
            }
        case "foreign-name-in-shard":
            try home.write("entry", to: "ab/" + entryName)
            try home.write("mine", to: "ab/notes")
        case "foreign-name-in-tmp":
            try home.write("entry", to: "ab/" + entryName)
            try home.write("mine", to: "tmp/report.txt")
        default:
            try home.write(journalMagic, to: "journal")
            try FileManager.default.createDirectory(atPath: home.file("tmp"), withIntermediateDirectories: true)
        }
        let before = try snapshot(of: home)
        #expect {
            try DiskCache(folder: home.path)
        } throws: { error in
            (error as? DiskCacheError)?.code == .notACache && (error as? DiskCacheError)?.path == home.path
        }
        #expect(try snapshot(of: home) == before)
    }

    /// Every path under `folder` with its content (folders as "/").
    private func snapshot(of folder: TemporaryFolder) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: folder.path) {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder.file(name), isDirectory: &isFolder)
            result[name] = isFolder.boolValue ? "/" : try folder.read(name)
        }
        return result
    }

    @Test func manyFirstOpensOfOneNewFolderAtOnceAllSucceed() throws {
        // Processes started together (two `imgpolicy --fetch` on a new --cache-dir) race to write
        // the marker: none may take the other's half-made marker for a foreign folder.
        for round in 0..<300 {
            let folder = TemporaryFolder()
            let path = folder.file("cache-\(round)")
            let failures = LockedList<String>()
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                do { _ = try DiskCache(folder: path) } catch { failures.append("\(error)") }
            }
            #expect(failures.values.isEmpty, "round \(round): \(failures.values)")
        }
    }

    @Test func symbolicLinksForTmpOrAShardAreNeverFollowed() throws {
        let outside = TemporaryFolder()
        let victimEntry = "0123456789abcdef0123456789abcdef"
        try outside.write("precious", to: "entry-0123456789abcdef")
        try outside.write("precious", to: victimEntry)
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try FileManager.default.removeItem(atPath: folder.file("tmp"))
        try folder.link("tmp", to: outside.path)
        try folder.link("01", to: outside.path)
        // A store refuses the symbolic link, naming it.
        #expect {
            try cache.store(TestImages.png(), for: testURL(1))
        } throws: { error in
            (error as? DiskCacheError)?.path == folder.file("tmp")
        }
        #expect(cache.counters.writeFailures == 1)
        let report = cache.removeAll()
        #expect(report.removed == 0)
        _ = try DiskCache(folder: folder.path).removeAll()
        #expect(try outside.list() == ["entry-0123456789abcdef", victimEntry].sorted())
        #expect(try outside.read(victimEntry) == "precious")
        #expect(report.failures.contains { $0.path == folder.file("01") })
    }

    // MARK: Fault 4: a FIFO or device in an entry's place

    @Test func aFIFOInPlaceOfAnEntryIsAMissRemovedAndNeverBlocks() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1))
        let path = cache.entryPath(for: testURL(1))
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        let reopened = try DiskCache(folder: folder.path)
        let listed = completes { _ = reopened.entries() }
        let result = LockedList<Bool>()
        let read = completes { result.append(reopened.image(for: testURL(1)) == nil) }
        if !listed || !read {
            // Release the blocked reader so that the test process can end.
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        #expect(listed && read, "the cache blocked on a FIFO")
        #expect(result.values == [true])
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(reopened.counters.damagedRemoved == 1)
    }

    @Test(.enabled(if: runsAsRoot, "needs root to make a device node"))
    func aDeviceNodeInPlaceOfAnEntryIsAMissAndRemoved() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1))
        let path = cache.entryPath(for: testURL(1))
        try FileManager.default.removeItem(atPath: path)
        #expect(mknod(path, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // 1,3: a /dev/null
        let result = LockedList<Bool>()
        #expect(completes { result.append(cache.image(for: testURL(1)) == nil) })
        #expect(result.values == [true])
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.fileExists(atPath: "/dev/null"))
    }

    // MARK: Fault 5: long URLs are stored readably, or refused

    @Test func theLongestAcceptedURLIsStoredReadablyAnd64KiBURLsNeverReachTheCache() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let prefix = "https://img.example/", suffix = ".png"
        let longest = try #require(ImageURL(prefix + String(repeating: "a", count: ImageURL.maximumLength - prefix.utf8.count - suffix.utf8.count) + suffix))
        #expect(longest.absoluteString.utf8.count == ImageURL.maximumLength)
        try cache.store(TestImages.png(), for: longest)
        #expect(try DiskCache(folder: folder.path).image(for: longest) == TestImages.png())
        #expect(cache.entries().first?.url == longest.absoluteString)
        // A URL of 64 KiB or more could not be stored readably: it is refused when the item is read.
        #expect(ImageURL(prefix + String(repeating: "b", count: 64 << 10) + suffix) == nil)
    }

    // MARK: Fault 8: private files

    @Test func filesAreCreated0600AndFolders0700UnlessConfigured() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.file("c"))
        try cache.store(TestImages.png(), for: testURL(1))
        let entry = cache.entryPath(for: testURL(1))
        #expect(fileMode(entry) & 0o777 == 0o600)
        #expect(fileMode(folder.file("c/.imgpolicy-cache")) & 0o777 == 0o600)
        #expect(fileMode(folder.file("c/journal")) & 0o777 == 0o600)
        #expect(fileMode(folder.file("c")) & 0o777 == 0o700)
        #expect(fileMode(parentPath(entry)) & 0o777 == 0o700)
        let shared = try DiskCache(folder: folder.file("s"), fileMode: 0o644)
        try shared.store(TestImages.png(), for: testURL(1))
        #expect(fileMode(shared.entryPath(for: testURL(1))) & 0o777 == 0o644)
    }

    // MARK: Fault 10: stray temporaries

    @Test func staleTemporariesAreSweptAtOpenButNotOnesALiveWriterHolds() throws {
        let folder = TemporaryFolder()
        _ = try DiskCache(folder: folder.path)
        try folder.write(Data(count: 3000), to: "tmp/entry-0123456789abcdef")  // left by kill -9
        try folder.write(Data(count: 3000), to: "tmp/entry-Ab3dE9")             // an earlier version's
        try folder.write("mine", to: "tmp/notes.txt")                           // not a cache name
        #expect(mkfifo(folder.file("tmp/entry-00000000000000ff"), 0o600) == 0)  // a FIFO: never opened blocking
        let held = try folder.write(Data(count: 8000), to: "tmp/entry-fedcba9876543210")
        let writer = open(held, O_RDONLY)
        defer { close(writer) }
        #expect(flock(writer, LOCK_EX) == 0)  // a live writer in another process holds its lock
        let (logger, log) = capturingLogger()
        let opened = LockedList<DiskCache>()
        #expect(completes { if let cache = try? DiskCache(folder: folder.path, capacity: 20_000, logger: logger) { opened.append(cache) } })
        let cache = try #require(opened.values.first)
        #expect(try folder.list("tmp") == ["entry-00000000000000ff", "entry-fedcba9876543210", "notes.txt"])
        #expect(cache.counters.temporariesSwept == 2)
        #expect(cache.counters.temporariesHeld == 1 && cache.counters.temporaryBytesHeld == 8000)
        #expect(log.entries.contains { $0.message.description.contains("stale temporary") })
        // The held temporary counts against the capacity meanwhile: 8,000 + 2 × 6,000 > 20,000.
        try cache.store(TestImages.png(size: 6000, seed: 1), for: testURL(1))
        try cache.store(TestImages.png(size: 6000, seed: 2), for: testURL(2))
        #expect(cache.statistics.count == 1)
        #expect(cache.counters.evictions == 1)
    }

    /// A process killed while it wrote the marker leaves `..imgpolicy-cache.tmp-…` in the folder
    /// itself: the next open removes it, but only a regular file of that name no live writer
    /// holds, never a link (nor what it points to), a FIFO or another name.
    @Test func staleMarkerTemporariesAreSweptAtOpen() throws {
        let folder = TemporaryFolder()
        try folder.write("outside", to: "outside.txt")
        _ = try DiskCache(folder: folder.file("c"))
        try folder.write("imgpolicy disk cache", to: "c/..imgpolicy-cache.tmp-0123456789abcdef")  // left by kill -9
        try folder.write("imgpolicy disk cache", to: "c/..imgpolicy-cache.tmp-Ab3dE9")
        #expect(symlink(folder.file("outside.txt"), folder.file("c/..imgpolicy-cache.tmp-00000000000000aa")) == 0)
        #expect(mkfifo(folder.file("c/..imgpolicy-cache.tmp-00000000000000ff"), 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder.file("c/..imgpolicy-cache.tmp-folder"), withIntermediateDirectories: false)
        try folder.write("mine", to: "c/.imgpolicy-cache.tmp-notes")  // not the marker's temporary
        let held = try folder.write("imgpolicy disk cache", to: "c/..imgpolicy-cache.tmp-fedcba9876543210")
        let writer = open(held, O_RDONLY)
        defer { close(writer) }
        #expect(flock(writer, LOCK_EX) == 0)  // another process writing the marker right now
        let opened = LockedList<DiskCache>()
        #expect(completes { if let cache = try? DiskCache(folder: folder.file("c")) { opened.append(cache) } })
        let cache = try #require(opened.values.first)
        #expect(cache.counters.temporariesSwept == 2)
        #expect(cache.counters.temporariesHeld == 1)
        let left = try folder.list("c").filter { $0.hasPrefix("..") || $0.hasPrefix(".imgpolicy-cache.") }.sorted()
        #expect(left == ["..imgpolicy-cache.tmp-00000000000000aa", "..imgpolicy-cache.tmp-00000000000000ff",
                         "..imgpolicy-cache.tmp-fedcba9876543210", "..imgpolicy-cache.tmp-folder", ".imgpolicy-cache.tmp-notes"])
        #expect(try folder.read("outside.txt") == "outside")
        #expect(try folder.read("c/.imgpolicy-cache") == "imgpolicy disk cache: every entry here may be removed at any time\n")
    }
}
