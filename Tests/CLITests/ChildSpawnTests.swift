import Foundation
import Testing
import TestSupport

/// A child started by hand inherits nothing but its three standard streams, so that a
/// long-lived one (nginx) can never hold another test's pipe, or the socket through which
/// Foundation learns that a process ended, open.
struct ChildSpawnTests {
    @Test func aSpawnedChildHoldsOnlyItsStandardStreams() async throws {
        // Descriptors of ours without close-on-exec, as Foundation's pipes and sockets are.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let pid = try ChildSpawn.spawn("/bin/sleep", ["30"])
        defer {
            kill(pid, SIGKILL)
            _ = ChildSpawn.wait(pid)
        }
        // The descriptor table is read once the child runs sleep (its command name says so).
        let running = await waitUntil(timeout: .seconds(20)) {
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "sleep\n"
        }
        try #require(running, "the child never ran sleep")
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { Int32($0) }.sorted()
        #expect(held == [0, 1, 2], "the child holds \(held)")
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/1")
        #expect(target == "/dev/null")
    }

    @Test func theStatusIsTheExitCodeOr128PlusTheSignal() throws {
        #expect(ChildSpawn.wait(try ChildSpawn.spawn("/bin/sh", ["-c", "exit 7"])).status == 7)
        #expect(ChildSpawn.wait(try ChildSpawn.spawn("/bin/sh", ["-c", "kill -TERM $$"])).status == 128 + SIGTERM)
        #expect(throws: ChildSpawnError.self) { try ChildSpawn.spawn("/nonexistent/program", []) }
    }
}
