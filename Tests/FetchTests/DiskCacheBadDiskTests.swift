import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// The folder part of `path`, as is (NSString's would also collapse `//`).
func parentPath(_ path: String) -> String {
    path.lastIndex(of: "/").map { String(path[..<$0]) } ?? path
}

/// Runs a system tool (mount, chattr); fails the test when it does not succeed.
func system(_ tool: String, _ arguments: [String]) throws {
    let result = try ProcessResult.run(tool, arguments)
    try #require(result.status == 0, "\(tool) \(arguments.joined(separator: " ")): \(result.stderr)")
}

/// Bad disks and bad folders (issue 6, fault 6 and "Proof"): a full tmpfs, immutable folders, files
/// and symbolic links where folders should be. Nothing hangs or crashes, every failure names its
/// path and is counted, and nothing outside the cache is touched. Mounts and immutable flags are
/// undone even when a test fails (`defer`).
struct DiskCacheBadDiskTests {
    @Test(.enabled(if: runsAsRoot, "needs root to mount a tmpfs"))
    func aFullDiskMakesStoreThrowNamingThePathAndLeavesNoTemporary() throws {
        let folder = TemporaryFolder()
        try folder.write("outside", to: "outside.txt")
        let disk = folder.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        try system("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])
        defer { try? system("/usr/bin/umount", [disk]) }
        let (logger, log) = capturingLogger()
        let cache = try DiskCache(folder: disk + "/cache", logger: logger)
        try cache.store(TestImages.png(size: 600_000, seed: 1), for: testURL(1))
        #expect {
            try cache.store(TestImages.png(size: 600_000, seed: 2), for: testURL(2))
        } throws: { error in
            let error = error as? DiskCacheError
            return error?.path.hasPrefix(disk + "/cache/tmp/entry-") == true && error?.message.contains("no space") == true
        }
        #expect(cache.counters.writeFailures == 1)
        #expect(log.entries.contains { $0.level == .error && $0.metadata["path"]?.description.hasPrefix(disk + "/cache/tmp/") == true })
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk + "/cache/tmp").isEmpty)
        #expect(cache.image(for: testURL(1)) == TestImages.png(size: 600_000, seed: 1))
        #expect(!cache.containsImage(at: testURL(2)))
        #expect(try folder.read("outside.txt") == "outside")
    }

    @Test(.enabled(if: runsAsRoot, "needs root for chattr +i"))
    func anImmutableShardMakesClearReportEachFailureAndKeepTheEntry() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1))
        let entry = cache.entryPath(for: testURL(1))
        let shard = parentPath(entry)
        try system("/usr/bin/chattr", ["+i", shard])
        defer { try? system("/usr/bin/chattr", ["-i", shard]) }
        let report = cache.removeAll()
        #expect(report.removed == 0)
        #expect(report.failures.map(\.path) == [entry])
        #expect(report.failures.first?.code == .removeFailed)
        #expect(cache.counters.removalFailures == 1)
        #expect(cache.statistics.count == 1)
        #expect(cache.image(for: testURL(1)) == TestImages.png())
    }

    @Test(.enabled(if: runsAsRoot, "needs root for chattr +i"))
    func anImmutableFolderMakesStoreThrowNamingIt() throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try system("/usr/bin/chattr", ["+i", folder.file("tmp")])
        defer { try? system("/usr/bin/chattr", ["-i", folder.file("tmp")]) }
        #expect {
            try cache.store(TestImages.png(), for: testURL(1))
        } throws: { error in
            (error as? DiskCacheError)?.path.hasPrefix(folder.file("tmp/")) == true
        }
        #expect(cache.counters.writeFailures == 1)
        let other = TemporaryFolder()
        let second = try DiskCache(folder: other.path)
        try system("/usr/bin/chattr", ["+i", other.path])
        defer { try? system("/usr/bin/chattr", ["-i", other.path]) }
        #expect {
            try second.store(TestImages.png(), for: testURL(1))  // its shard cannot be created
        } throws: { error in
            (error as? DiskCacheError)?.path == parentPath(second.entryPath(for: testURL(1)))
        }
        #expect(second.counters.writeFailures == 1)
    }

    @Test(.enabled(if: runsAsRoot, "needs root for chattr +i"))
    func anUnwritableJournalIsReadNotRemovedAndItsFailuresAreReported() throws {
        let folder = TemporaryFolder()
        do {
            let cache = try DiskCache(folder: folder.path)
            for n in 0..<3 { try cache.store(TestImages.png(seed: n), for: testURL(n)) }
        }
        let journal = try bytes(at: folder.file("journal"))
        try system("/usr/bin/chattr", ["+i", folder.file("journal")])
        defer { try? system("/usr/bin/chattr", ["-i", folder.file("journal")]) }
        let (logger, log) = capturingLogger()
        let cache = try DiskCache(folder: folder.path, logger: logger)
        #expect(cache.statistics.count == 3)
        #expect(cache.image(for: testURL(1)) == TestImages.png(seed: 1))
        // Issue 6, tester's fault 3: the entry cannot be recorded, so store throws naming the
        // journal, and keeps no entry file that no index shows.
        #expect {
            try cache.store(TestImages.png(seed: 3), for: testURL(3))
        } throws: { error in
            (error as? DiskCacheError)?.path == folder.file("journal")
                && (error as? DiskCacheError)?.message.hasPrefix("cannot append to the journal: operation not permitted") == true
        }
        #expect(!cache.containsImage(at: testURL(3)))
        #expect(!FileManager.default.fileExists(atPath: cache.entryPath(for: testURL(3))))
        #expect(cache.image(for: testURL(3)) == nil)
        #expect(cache.counters.writeFailures >= 1)
        #expect(log.entries.contains { $0.level == .error && $0.metadata["path"]?.description == folder.file("journal") })
        #expect(try bytes(at: folder.file("journal")) == journal)
    }

    @Test(arguments: ["tmp-file", "shard-file", "shard-symlink-to-file"])
    func aFileOrSymbolicLinkWhereAFolderShouldBeMakesStoreThrowNamingIt(_ obstacle: String) throws {
        let outside = TemporaryFolder()
        try outside.write("outside", to: "target")
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        let shard = parentPath(cache.entryPath(for: testURL(1)))
        let blocked: String
        switch obstacle {
        case "tmp-file":
            try FileManager.default.removeItem(atPath: folder.file("tmp"))
            blocked = try folder.write("not a folder", to: "tmp")
        case "shard-file":
            blocked = shard
            try Data("not a folder".utf8).write(to: URL(fileURLWithPath: shard))
        default:
            blocked = shard
            try FileManager.default.createSymbolicLink(atPath: shard, withDestinationPath: outside.file("target"))
        }
        #expect {
            try cache.store(TestImages.png(), for: testURL(1))
        } throws: { error in
            (error as? DiskCacheError)?.path == blocked
        }
        #expect(cache.counters.writeFailures == 1)
        #expect(cache.image(for: testURL(1)) == nil)
        #expect(cache.removeAll().removed == 0)
        #expect(try outside.read("target") == "outside")
    }

    /// Issue 6, tester's fault 2: an indexed entry whose shard became a symbolic link or a file
    /// is no longer "cached" once a read fails, and storing it again reports the failure.
    @Test(arguments: ["shard-symlink-to-folder", "shard-file"])
    func anIndexedEntryThatCannotBeReadLeavesTheIndexAndStoreReportsWhy(_ obstacle: String) throws {
        let folder = TemporaryFolder()
        let cache = try DiskCache(folder: folder.path)
        try cache.store(TestImages.png(), for: testURL(1))
        let shard = parentPath(cache.entryPath(for: testURL(1)))
        try FileManager.default.moveItem(atPath: shard, toPath: shard + ".real")
        if obstacle == "shard-file" {
            try Data("not a folder".utf8).write(to: URL(fileURLWithPath: shard))
        } else {
            try FileManager.default.createSymbolicLink(atPath: shard, withDestinationPath: shard + ".real")
        }
        #expect(cache.containsImage(at: testURL(1)))  // from the index, before any read
        #expect(cache.image(for: testURL(1)) == nil)
        #expect(!cache.containsImage(at: testURL(1)))
        #expect {
            try cache.store(TestImages.png(), for: testURL(1))
        } throws: { error in
            (error as? DiskCacheError)?.path == shard
        }
        #expect(!cache.containsImage(at: testURL(1)))
    }

    /// Issue 6, tester's fault 4: an empty folder that cannot be written opens as an empty cache
    /// (nothing needs writing to answer "is it cached?"); a store fails naming what it could not write.
    @Test(.enabled(if: runsAsRoot, "needs root for chattr +i"))
    func anEmptyImmutableFolderOpensAsAnEmptyCacheAndStoresFailNamingIt() throws {
        let parent = TemporaryFolder()
        let path = parent.file("cache")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try system("/usr/bin/chattr", ["+i", path])
        defer { try? system("/usr/bin/chattr", ["-i", path]) }
        let cache = try DiskCache(folder: path)
        #expect(cache.statistics.count == 0)
        #expect(!cache.containsImage(at: testURL(1)))
        #expect(cache.image(for: testURL(1)) == nil)
        #expect(cache.entries().isEmpty)
        #expect(cache.removeAll().failures.isEmpty)
        #expect(cache.counters.writeFailures == 0)
        #expect {
            try cache.store(TestImages.png(), for: testURL(1))
        } throws: { error in
            // The marker it could not write, not a shard made in the folder.
            (error as? DiskCacheError)?.path == path + "/.imgpolicy-cache"
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
    }

    /// Probe of issue 17 (F1): a first open on a full disk cannot write the marker; the cache is
    /// only read, and a store used to create `tmp/` and a shard anyway (`mkdir` works on a full
    /// tmpfs), so that once there was room again every command refused the folder as "not a cache
    /// folder". Now nothing is created in it, and the next open, with room, makes it a cache.
    @Test(.enabled(if: runsAsRoot, "needs root to mount a tmpfs"))
    func aFirstOpenOnAFullDiskCreatesNothingAndTheFolderWorksOnceThereIsRoom() throws {
        let folder = TemporaryFolder()
        let disk = folder.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        try system("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", disk])
        defer { try? system("/usr/bin/umount", [disk]) }
        let path = disk + "/cache"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        // Fill the disk: writes fail with "no space" from here on.
        #expect(FileManager.default.createFile(atPath: disk + "/fill", contents: nil))
        let filler = try #require(FileHandle(forWritingAtPath: disk + "/fill"))
        while (try? filler.write(contentsOf: Data(count: 4096))) != nil {}
        try? filler.close()
        do {
            let cache = try DiskCache(folder: path)
            #expect(!cache.containsImage(at: testURL(1)))
            #expect(throws: DiskCacheError.self) { try cache.store(TestImages.png(size: 300, seed: 1), for: testURL(1)) }
            #expect(try cache.savePartial([UInt8](repeating: 1, count: 64 << 10), for: testURL(2), validator: "\"v\"", totalLength: 1 << 20) == false)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
        try FileManager.default.removeItem(atPath: disk + "/fill")
        let cache = try DiskCache(folder: path)
        try cache.store(TestImages.png(size: 300, seed: 1), for: testURL(1))
        #expect(cache.image(for: testURL(1)) == TestImages.png(size: 300, seed: 1))
        #expect(FileManager.default.fileExists(atPath: path + "/.imgpolicy-cache"))
    }

    @Test func aFileWhereTheCacheFolderShouldBeIsAnErrorNamingIt() throws {
        let folder = TemporaryFolder()
        let path = try folder.write("a file", to: "cache")
        #expect {
            try DiskCache(folder: path)
        } throws: { error in
            (error as? DiskCacheError)?.path == path && (error as? DiskCacheError)?.code == .openFailed
        }
        #expect(try folder.read("cache") == "a file")
    }
}
