import Foundation
import Testing
import TestSupport

/// `imgpolicy cache clear` on folders that are not caches or cannot be emptied, and a cache shared
/// by two processes.
struct CacheCommandTests {
    let cli = CLIRunner()
    /// Servers started by helpers, kept for the test's length.
    private let servers = LockedList<TestHTTPServer>()

    @Test func clearRefusesAFolderThatIsNotACacheAndTouchesNothing() async throws {
        let home = TemporaryFolder()
        try home.write("notes", to: "tmp/entry-abc123")
        try home.write("notes", to: "tmp/report.txt")
        try home.write("notes", to: "notes.txt")
        let result = try await cli.run(["cache", "clear", "--cache-dir", home.path])
        #expect(result.status == 74)
        #expect(result.stderr.hasPrefix("imgpolicy: cannot open the cache: \(home.path): not a cache folder"))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
        #expect(try home.list("tmp") == ["entry-abc123", "report.txt"])
        #expect(try home.list() == ["notes.txt", "tmp"])
    }

    /// Issue 6, tester's fault 1: a user's file named `journal` is no earlier cache.
    @Test(arguments: [["cache", "stats"], ["cache", "list"], ["--network", "wifi", "--item", "ITEM"]])
    func aFolderHoldingOnlyAUsersJournalIsRefusedAndUntouched(_ command: [String]) async throws {
        let home = TemporaryFolder()
        try home.write("Dear diary\n", to: "journal")
        let item = try cli.home.write(#"{"id": "x", "original": "http://127.0.0.1:9/o.png"}"#, to: "item.json")
        let result = try await cli.run(command.map { $0 == "ITEM" ? item : $0 } + ["--cache-dir", home.path])
        #expect(result.status == 74)
        #expect(result.stderr.hasPrefix("imgpolicy: cannot open the cache: \(home.path): not a cache folder"))
        #expect(try home.list() == ["journal"])
        #expect(try home.read("journal") == "Dear diary\n")
    }

    /// A folder holding only a usage ledger (no marker) is not the cache's: the ledger is written
    /// only beside the marker. Every command refuses it, naming the folder, and writes nothing
    /// (it used to be adopted: the marker, `journal` and `tmp/` were written, even by a decision).
    @Test(arguments: [["cache", "stats"], ["stats"], ["--network", "wifi", "--item", "ITEM"],
                      ["--network", "wifi", "--item", "ITEM", "--fetch"]])
    func aFolderHoldingOnlyALedgerIsRefusedAndUntouched(_ command: [String]) async throws {
        let home = TemporaryFolder()
        try home.write("", to: "usage/lock")
        try home.write("not mine", to: "usage/2026-11-01.json")
        let item = try cli.home.write(#"{"id": "x", "original": "http://127.0.0.1:9/o.png"}"#, to: "item.json")
        let result = try await cli.run(command.map { $0 == "ITEM" ? item : $0 } + ["--cache-dir", home.path])
        #expect(result.status == 74)
        #expect(result.stderr.hasPrefix("imgpolicy: cannot open the cache: \(home.path): not a cache folder"))
        #expect(try home.list() == ["usage"])
        #expect(try home.list("usage") == ["2026-11-01.json", "lock"])
    }

    /// A folder holding only the cache's marker (and perhaps its ledger) is an empty cache: a
    /// decision decides as with no cache and writes nothing (no `journal`, no `tmp/`).
    @Test(arguments: [false, true])
    func aDecisionWritesNothingInACacheFolderHoldingNoImage(_ withLedger: Bool) async throws {
        let home = TemporaryFolder()
        try home.write("imgpolicy disk cache: every entry here may be removed at any time\n", to: ".imgpolicy-cache")
        if withLedger { try home.write("", to: "usage/lock") }
        let item = try cli.home.write(#"{"id": "x", "original": "http://127.0.0.1:9/o.png"}"#, to: "item.json")
        let result = try await cli.run(["--network", "offline", "--item", item, "--cache-dir", home.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("x: placeholder"))
        #expect(try home.list() == [".imgpolicy-cache"] + (withLedger ? ["usage"] : []))
    }

    @Test(.enabled(if: getuid() == 0, "needs root for chattr +i"))
    func clearExits74NamingWhatItCouldNotRemove() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 2_000, seed: 1))])
        let cacheDir = cli.home.file("cache")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        #expect(try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir]).status == 0)
        let shard = try #require(try cli.home.list("cache").first { $0.count == 2 })
        let entry = try #require(try cli.home.list("cache/" + shard).first)
        let shardPath = cacheDir + "/" + shard
        #expect(try ProcessResult.run("/usr/bin/chattr", ["+i", shardPath]).status == 0)
        defer { _ = try? ProcessResult.run("/usr/bin/chattr", ["-i", shardPath]) }
        let result = try await cli.run(["cache", "clear", "--cache-dir", cacheDir])
        #expect(result.status == 74)
        #expect(result.stdout == "removed 0 entries from \(cacheDir)\n")
        #expect(result.stderr == "imgpolicy: \(shardPath)/\(entry): cannot remove: operation not permitted\n")
        #expect(FileManager.default.fileExists(atPath: shardPath + "/" + entry))
    }

    /// Issue 6, tester's fault 3: a store whose journal cannot be appended is a failure, not silence.
    @Test(.enabled(if: getuid() == 0, "needs root for chattr +i"))
    func fetchExits74NamingAJournalThatCannotBeWritten() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 2_000, seed: 1))])
        let cacheDir = cli.home.file("cache")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        #expect(try await cli.run(["cache", "clear", "--cache-dir", cacheDir]).status == 0)
        let journal = cacheDir + "/journal"
        #expect(try ProcessResult.run("/usr/bin/chattr", ["+i", journal]).status == 0)
        defer { _ = try? ProcessResult.run("/usr/bin/chattr", ["-i", journal]) }
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 74)
        #expect(result.stderr.contains(journal))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
        #expect(try cli.home.list("cache").allSatisfy { $0.count != 2 || (try? cli.home.list("cache/" + $0))?.isEmpty == true })
    }

    /// Issue 6, tester's fault 4: a plain decision or `cache stats`/`list` on an empty folder
    /// that cannot be written needs no write.
    @Test(.enabled(if: getuid() == 0, "needs root for chattr +i"))
    func anEmptyImmutableCacheFolderStillDecidesAndReports() async throws {
        let readOnly = cli.home.file("ro")
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
        let item = try cli.home.write(#"{"id": "x", "original": "http://127.0.0.1:9/o.png"}"#, to: "x.json")
        #expect(try ProcessResult.run("/usr/bin/chattr", ["+i", readOnly]).status == 0)
        defer { _ = try? ProcessResult.run("/usr/bin/chattr", ["-i", readOnly]) }
        let decision = try await cli.run(["--network", "wifi", "--item", item, "--cache-dir", readOnly])
        #expect(decision.status == 0)
        #expect(decision.stdout.hasPrefix("x: load original http://127.0.0.1:9/o.png"))
        #expect(decision.stderr == "")
        let stats = try await cli.run(["cache", "stats", "--cache-dir", readOnly])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("entries: 0\n"))
        #expect(try await cli.run(["cache", "list", "--cache-dir", readOnly]).status == 0)
        #expect(try cli.home.list("ro").isEmpty)
    }

    /// Issue 6, tester's fault 2: an entry indexed in a shard that became a symbolic link is not
    /// "cached" forever: the original is loaded again, and the failed store is reported.
    @Test func anEntryInAShardThatBecameASymbolicLinkIsLoadedAgainAndTheStoreFailureReported() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 2_000, seed: 1))])
        let cacheDir = cli.home.file("cache")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        #expect(try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir]).status == 0)
        let shard = try #require(try cli.home.list("cache").first { $0.count == 2 })
        try FileManager.default.moveItem(atPath: cacheDir + "/" + shard, toPath: cacheDir + "/" + shard + ".real")
        try FileManager.default.createSymbolicLink(atPath: cacheDir + "/" + shard, withDestinationPath: shard + ".real")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 74)
        #expect(!result.stdout.contains("placeholder"))
        #expect(result.stderr.contains(cacheDir + "/" + shard))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
    }

    /// Issue 16: `cache list` and `cache stats` counted the entry file, header and URL included
    /// (5045 bytes for a 4714-byte image). They report the image's bytes; `stats` also the files'.
    @Test func listAndStatsCountTheImagesBytes() async throws {
        let image = TestImages.png(size: 4_714, seed: 3)
        let server = try TestHTTPServer(routes: ["/o.png": .ok(image)])
        let cacheDir = cli.home.file("cache")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        #expect(try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir]).status == 0)
        let shard = try #require(try cli.home.list("cache").first { $0.count == 2 })
        let entry = try #require(try cli.home.list("cache/" + shard).first)
        let fileBytes = try #require(try FileManager.default.attributesOfItem(atPath: cacheDir + "/" + shard + "/" + entry)[.size] as? Int)
        #expect(fileBytes > image.count)
        let list = try await cli.run(["cache", "list", "--cache-dir", cacheDir])
        #expect(list.stdout == "\(image.count)\t\(server.url("/o.png"))\n")
        let stats = try await cli.run(["cache", "stats", "--cache-dir", cacheDir])
        #expect(stats.stdout.contains("\nentries: 1\nbytes: \(image.count)\nfile bytes: \(fileBytes)\n"), "\(stats.stdout)")
    }

    /// Issue 16: a folder in place of an entry made `cache clear` say it removed nothing, exit 0,
    /// and leave it. An empty folder is removed and counted; one holding anything is named and
    /// left as it is (74).
    @Test(arguments: [false, true])
    func clearRemovesAnEmptyFolderInAnEntrysPlaceAndNamesAFullOne(_ full: Bool) async throws {
        let (cacheDir, entryPath) = try await cacheWithOneEntry()
        try FileManager.default.removeItem(atPath: entryPath)
        try FileManager.default.createDirectory(atPath: entryPath, withIntermediateDirectories: false)
        if full { try Data("mine".utf8).write(to: URL(fileURLWithPath: entryPath + "/keep.txt")) }
        let result = try await cli.run(["cache", "clear", "--cache-dir", cacheDir])
        if full {
            #expect(result.status == 74)
            #expect(result.stdout == "removed 0 entries from \(cacheDir)\n")
            #expect(result.stderr == "imgpolicy: \(entryPath): cannot remove: a folder that is not empty is in the place of the entry; the cache removes only its own files (remove it yourself)\n")
            #expect(try String(contentsOfFile: entryPath + "/keep.txt", encoding: .utf8) == "mine")
        } else {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "removed 1 entries from \(cacheDir)\n")
            #expect(!FileManager.default.fileExists(atPath: entryPath))
        }
    }

    /// Issue 16: a folder in place of an entry made every fetch of that URL exit 74. An empty one
    /// is the cache's own debris: removed as a miss, the image stored (exit 0). One holding
    /// anything is not the cache's to remove: the image is delivered, the store fails naming the
    /// folder (74), and the folder is left as it is.
    @Test(arguments: [false, true])
    func aFetchOverAFolderInAnEntrysPlace(_ full: Bool) async throws {
        let (cacheDir, entryPath) = try await cacheWithOneEntry()
        let item = cli.home.file("item.json")
        try FileManager.default.removeItem(atPath: entryPath)
        try FileManager.default.createDirectory(atPath: entryPath, withIntermediateDirectories: false)
        if full { try Data("mine".utf8).write(to: URL(fileURLWithPath: entryPath + "/keep.txt")) }
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.stdout.hasPrefix("x: load original from network, 2000 bytes"), "\(result.stdout)")
        if full {
            #expect(result.status == 74)
            #expect(result.stderr.hasPrefix("imgpolicy: \(entryPath): "), "\(result.stderr)")
            #expect(result.stderr.contains("a folder that is not empty is in the place of the entry"), "\(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1)
            #expect(try String(contentsOfFile: entryPath + "/keep.txt", encoding: .utf8) == "mine")
        } else {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty)
            let again = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
            #expect(again.stdout.hasPrefix("x: show-cached original from disk, 2000 bytes"), "\(again.stdout)")
        }
    }

    /// A cache holding the original of `item.json` (id `x`), fetched from a server of its own.
    private func cacheWithOneEntry() async throws -> (cacheDir: String, entryPath: String) {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 2_000, seed: 1))])
        servers.append(server)
        let cacheDir = cli.home.file("cache")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        let fetch = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        let shard = try #require(try cli.home.list("cache").first { $0.count == 2 })
        let entry = try #require(try cli.home.list("cache/" + shard).first)
        return (cacheDir, cacheDir + "/" + shard + "/" + entry)
    }

    /// Issue 16: `cache stats` at the default location created the folder, its marker and
    /// journal. Inspection commands (`cache stats`, `cache list`, `stats`) write nothing: not at a
    /// missing default location, not in an existing cache (a stale temporary is left for the
    /// next command that writes).
    @Test(arguments: [["cache", "stats"], ["cache", "list"], ["stats"]])
    func inspectionCommandsWriteNothing(_ command: [String]) async throws {
        let atDefault = try await cli.run(command)
        #expect(atDefault.status == 0, "\(atDefault.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.home.file(".cache")), "\((try? cli.home.list()) ?? [])")
        if command == ["cache", "stats"] { #expect(atDefault.stdout.contains("entries: 0\nbytes: 0\n"), "\(atDefault.stdout)") }

        let (cacheDir, _) = try await cacheWithOneEntry()
        try Data("half".utf8).write(to: URL(fileURLWithPath: cacheDir + "/tmp/entry-0123456789abcdef"))
        try FileManager.default.removeItem(atPath: cacheDir + "/journal")
        let before = try snapshot(cacheDir)
        let result = try await cli.run(command + ["--cache-dir", cacheDir])
        #expect(result.status == 0, "\(result.stderr)")
        if command == ["cache", "list"] { #expect(result.stdout.contains("2000\t")) }
        #expect(try snapshot(cacheDir) == before)
    }

    /// Every path under `folder` with its size and modification time.
    private func snapshot(_ folder: String) throws -> [String] {
        let names = try FileManager.default.subpathsOfDirectory(atPath: folder).sorted()
        return try names.map { name in
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)
            return "\(name) \(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? 0)"
        }
    }

    @Test func anOriginalFetchedByOneProcessIsShownCachedByAnotherOnCellular() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 20_000, seed: 1)),
                                                 "/t.png": .ok(TestImages.png(size: 2_000, seed: 2))])
        let cacheDir = cli.home.file("shared")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))", "thumbnail": "\#(server.url("/t.png"))"}"#, to: "item.json")
        let fetch = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        let decide = try await cli.run(["--network", "cellular", "--item", item, "--cache-dir", cacheDir])
        #expect(decide.stdout.hasPrefix("x: show-cached original \(server.url("/o.png"))"), "\(decide.stdout)")
    }
}
