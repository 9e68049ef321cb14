import Foundation
import Testing
import TestSupport

/// Standard output that loses what is written to it, and standard descriptors the caller closed,
/// run through a real shell redirection: the command never reports success for a report nobody
/// received, and never reads or writes a descriptor of the runtime's in their place.
struct StandardStreamsTests {
    let home = TemporaryFolder()

    /// Runs `imgpolicy arguments` with `redirection` applied by `/bin/sh` (e.g. `>/dev/full`).
    func run(_ arguments: [String], _ redirection: String) async throws -> ProcessResult {
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config"), "XDG_CACHE_HOME": home.file("cache")]
        return try await offThePool {
            try ProcessResult.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" \(redirection)", PackagePaths.executable] + arguments,
                                  environment: environment, workingDirectory: PackagePaths.root)
        }
    }

    @Test("a report written to a full disk is a failure, exit 74 with one line", arguments: [
        ["--network", "wifi", "--item", "examples/item.json"],                 // the plain decision's own reading
        ["decide", "--network", "wifi", "--item", "examples/item.json", "--json"],
        ["policy", "table"],                                                   // more than a buffer's worth
        ["policy", "show", "--json"],
        ["--version"],
    ])
    func aFullStandardOutputExits74(arguments: [String]) async throws {
        let result = try await run(arguments, ">/dev/full")
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr == "imgpolicy: standard output: no space left on device\n")
    }

    @Test func aClosedStandardOutputExits74AndNothingElseReceivesTheReport() async throws {
        let result = try await run(["--network", "wifi", "--item", "examples/item.json"], ">&-")
        #expect(result.status == 74)
        #expect(result.stderr == "imgpolicy: standard output: bad file descriptor\n")
    }

    @Test("a closed standard input is read as such, on every path", arguments: [
        ["--network", "wifi", "--item", "-"],
        ["--network", "wifi", "--item", "-", "--fetch", "--cache-dir", "CACHE"],
        ["--network", "wifi", "--item", "-", "-v"],
    ])
    func aClosedStandardInputIsABadDescriptorOnEveryPath(arguments: [String]) async throws {
        let result = try await run(arguments.map { $0 == "CACHE" ? home.file("c") : $0 }, "<&-")
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == "imgpolicy: <stdin>: bad file descriptor\n")
    }

    @Test func aDecisionToDevNullStillSucceeds() async throws {
        let result = try await run(["--network", "wifi", "--item", "examples/item.json"], ">/dev/null")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
    }
}
