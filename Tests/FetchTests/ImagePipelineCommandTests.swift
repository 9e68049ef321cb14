import Foundation
import Fetch
import Testing
import TestSupport

/// `imgpolicy --fetch` as a process against the loopback server: the pipeline's guarantees seen
/// from the command (faults 5 and 6).
struct ImagePipelineCommandTests {
    let home = TemporaryFolder()
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    var cacheDir: String { home.file("cache") }

    func run(_ arguments: [String]) async throws -> ProcessResult {
        let executable = PackagePaths.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the package first: \(executable) is missing")
        let environment = ["XDG_CONFIG_HOME": home.file("config"), "HOME": home.path]
        let result = try await offThePool { try ProcessResult.run(executable, arguments, environment: environment) }
        #expect(!result.crashed, "imgpolicy crashed: \(result.stderr)")
        return result
    }

    /// An item file of `count` items with distinct originals of `size` bytes, no thumbnails.
    func items(_ count: Int, size: Int = 200, name: String = "items.json") throws -> String {
        var objects: [String] = []
        for index in 0..<count {
            server.route("/i\(index).png", .ok(TestImages.png(size: size, seed: index)))
            objects.append(#"{"id": "i\#(index)", "original": "\#(server.url("/i\(index).png"))"}"#)
        }
        return try home.write("[" + objects.joined(separator: ",") + "]", to: name)
    }

    /// 3,000 items decided "show cached" while other processes run `cache clear` on the same
    /// folder: every item is shown (from disk, or loaded again) and none fails as offline. (A
    /// clear may also remove a write's temporary file: that write fails, is reported, exit 74.)
    @Test func cacheClearedByAnotherProcessMeanwhileNeverFailsAsOffline() async throws {
        let items = try items(3000)
        let arguments = ["--network", "wifi", "--item", items, "--fetch", "--cache-dir", cacheDir]
        let first = try await run(arguments)
        #expect(first.status == 0, "\(first.stderr)")
        // The second run decides from its index (all cached) while the cache is being cleared.
        let clearing = ClearingProcesses(arguments: ["cache", "clear", "--cache-dir", cacheDir], home: home)
        let second = try await run(arguments)
        let clears = try await offThePool { clearing.stop() }
        #expect(clears > 0)
        #expect(second.status == 0 || second.status == 74, "\(second.stderr.prefix(500))")
        #expect(!second.stderr.contains("offline"))
        let errors = second.stderr.split(separator: "\n")
        #expect(errors.allSatisfy { $0.hasPrefix("imgpolicy: \(cacheDir)/") }, "\(second.stderr.prefix(500))")
        let lines = second.stdout.split(separator: "\n").dropLast()  // the last: the usage line
        #expect(lines.count == 3000)
        #expect(lines.allSatisfy { $0.contains(" original from ") && !$0.contains("failed") })
    }

    /// A cache on a 1 MiB tmpfs: every image is still delivered, each distinct failed write is
    /// reported on one line naming the path, and the command exits 74.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a tmpfs"))
    func aFullDiskIsReportedAfterDeliveringEverything() async throws {
        let mountPoint = home.file("tiny")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try ProcessResult.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.stderr)")
        defer { _ = try? ProcessResult.run("/usr/bin/umount", [mountPoint]) }
        let items = try items(8, size: 300_000)
        let result = try await run(["--network", "wifi", "--item", items, "--fetch", "--cache-dir", mountPoint + "/cache"])
        #expect(result.status == 74, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").dropLast()  // the last: the usage line
        #expect(lines.count == 8 && lines.allSatisfy { $0.contains("load original from network, 300000 bytes") }, "\(result.stdout)")
        // One cause, one line: the first path that failed, and how many more failed so.
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 1, "\(result.stderr)")
        #expect(errors.allSatisfy { $0.hasPrefix("imgpolicy: \(mountPoint)/cache/") }, "\(result.stderr)")
        #expect(result.stderr.contains("no space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains("more cache writes failed so)"), "\(result.stderr)")
    }

    /// A file where the cache's `tmp/` folder should be: one line naming it, exit 74.
    @Test func aFileWhereTheTemporaryFolderShouldBeIsReported() async throws {
        // A cache (with its marker) whose tmp/ folder was replaced by a file.
        _ = try DiskCache(folder: cacheDir)
        try FileManager.default.removeItem(atPath: cacheDir + "/tmp")
        try home.write("not a folder", to: "cache/tmp")
        let items = try items(3)
        let result = try await run(["--network", "wifi", "--item", items, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 74, "\(result.stderr)")
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 1, "\(result.stderr)")
        #expect(errors.first?.hasPrefix("imgpolicy: \(cacheDir)/tmp") == true, "\(result.stderr)")
    }
}

/// Runs a command over and over, in processes of its own one after the other, until stopped.
final class ClearingProcesses: @unchecked Sendable {
    // Guards `stopped` and `runs`.
    private let lock = NSLock()
    private var stopped = false
    private var runs = 0
    private let done = DispatchSemaphore(value: 0)

    init(arguments: [String], home: TemporaryFolder) {
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopped }) {
                _ = try? ProcessResult.run(PackagePaths.executable, arguments,
                                           environment: ["XDG_CONFIG_HOME": home.file("config"), "HOME": home.path])
                lock.withLock { runs += 1 }
            }
            done.signal()
        }
    }

    /// Stops and waits for the last process; returns how many ran.
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { runs }
    }
}
