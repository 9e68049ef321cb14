import Foundation
import Testing
import TestSupport

/// Too few file descriptors never kill the command (issue 16 item 7): under every limit from 3 to
/// 64 (`ulimit -n`), `--fetch`, `--fetch --size`, `network` and `simulate` either work or fail
/// with one line per failure on standard error and a documented exit status, never a signal, a
/// trap or a backtrace. At the lowest limits the system's loader itself cannot open the C
/// library (exit 127, its own message, before imgpolicy runs): that is allowed and said.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DescriptorLimitTests {
    static let limits = Array(3...64)

    struct Run: Sendable {
        var limit: Int
        var result: ProcessResult
    }

    /// Runs `arguments` under each limit, a few at once; returns every run.
    static func sweep(_ arguments: [String], home: TemporaryFolder) async throws -> [Run] {
        var runs: [Run] = []
        for batch in stride(from: 0, to: limits.count, by: 8).map({ Array(limits[$0..<min($0 + 8, limits.count)]) }) {
            runs += try await withThrowingTaskGroup(of: Run.self) { group in
                for limit in batch {
                    // Each run its own cache folder: no run waits for another's lock.
                    let args = arguments.map { $0 == "CACHE" ? home.file("cache-\(limit)") : $0 }
                    group.addTask {
                        let result = try await offThePool {
                            // A run that hangs is killed after two minutes (timeout's status 137: a failure).
                            try ProcessResult.run("/usr/bin/timeout", ["-s", "KILL", "120", "/bin/sh", "-c",
                                                                       "ulimit -n \(limit) && exec \"$0\" \"$@\"", PackagePaths.executable] + args,
                                                  environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config")])
                        }
                        return Run(limit: limit, result: result)
                    }
                }
                var found: [Run] = []
                for try await run in group { found.append(run) }
                return found
            }
        }
        return runs.sorted { $0.limit < $1.limit }
    }

    /// Every run ended by itself with a documented status, and said why in `imgpolicy:` lines.
    static func check(_ runs: [Run], allowed: Set<Int32>, command: String) {
        var worked = 0
        for run in runs {
            let result = run.result, stderr = result.stderr
            let lines = stderr.split(separator: "\n").filter { !$0.isEmpty }
            let context = "\(command) under ulimit -n \(run.limit): status \(result.status), stderr \(stderr.prefix(400))"
            #expect(!result.crashed && result.status < 128, "\(context)\(result.status == 137 ? " (hung: killed after 120 s)" : "")")
            #expect(!stderr.contains("Backtracing") && !stderr.contains("Fatal error") && !stderr.contains("Illegal instruction"), "\(context)")
            if result.status == 127 {
                // The system's loader, before imgpolicy runs: only where no descriptor is free.
                #expect(stderr.contains("error while loading shared libraries") && run.limit <= 4, "\(context)")
                continue
            }
            if result.status == 0 { worked += 1; continue }
            #expect(allowed.contains(result.status), "\(context)")
            // Running short of descriptors is the process's state, not a missing input (66) nor
            // the server (69): the documented status is 74.
            if stderr.contains("too many open files") { #expect(result.status == 74, "\(context)") }
            #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("imgpolicy:") }, "\(context)")
        }
        // Generous limits work: the sweep tests failures, not a command that never works.
        #expect(runs.filter { $0.limit >= 48 }.allSatisfy { $0.result.status == 0 }, "\(command): \(runs.filter { $0.limit >= 48 && $0.result.status != 0 }.map { "\($0.limit): \($0.result.stderr.prefix(200))" })")
        #expect(worked > 0)
    }

    @Test func fetchAndSizeNeverDieForWantOfDescriptors() async throws {
        let home = TemporaryFolder()
        let png = try #require(FileManager.default.contents(atPath: PackagePaths.root + "/examples/images/sunset-original.png"))
        let server = try TestHTTPServer(routes: ["/p.png": .ok([UInt8](png))])
        let item = try home.write(#"{"id": "p", "original": "\#(server.url("/p.png"))"}"#, to: "item.json")
        let fetch = try await Self.sweep(["--fetch", "--item", item, "--cache-dir", "CACHE", "--network", "wifi"], home: home)
        Self.check(fetch, allowed: [66, 69, 74], command: "--fetch")
        let size = try await Self.sweep(["--fetch", "--size", "40x40", "--item", item, "--cache-dir", "CACHE", "--network", "wifi"], home: home)
        Self.check(size, allowed: [66, 69, 74], command: "--fetch --size")
    }

    @Test func networkNeverDiesForWantOfDescriptors() async throws {
        let home = TemporaryFolder()
        Self.check(try await Self.sweep(["network"], home: home), allowed: [66, 69, 74], command: "network")
        Self.check(try await Self.sweep(["network", "--json"], home: home), allowed: [66, 69, 74], command: "network --json")
    }

    @Test func simulateNeverDiesForWantOfDescriptors() async throws {
        let home = TemporaryFolder()
        let runs = try await Self.sweep(["simulate", "--items", "3", "--visible", "3", "--rows-per-second", "50", "--latency", "1-3",
                                         "--network-script", "wifi@0s"], home: home)
        // 1: the simulation's own verdict (a goal not met because loads failed) is a documented status.
        Self.check(runs, allowed: [1, 66, 69, 74], command: "simulate")
        // A run that ends 0 measured what it says: none of its loads failed for want of
        // descriptors (such a run exited 0 with every goal "met" and nothing requested).
        for run in runs where run.result.status == 0 {
            #expect(run.result.stdout.contains("no load failed for want of resources (descriptors, threads, memory, disk): none"),
                    "simulate under ulimit -n \(run.limit) exited 0: \(run.result.stdout.prefix(600))")
        }
    }
}
