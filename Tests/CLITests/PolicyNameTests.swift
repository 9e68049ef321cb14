import Foundation
import Testing
import TestSupport

/// A bare name is a bundled policy, never a file in the current folder; a path has a `/` or
/// ends in `.json`. `policy check` and `policy show` say which file they read.
struct PolicyNameTests {
    let cli = CLIRunner()

    /// A folder holding files named like bundled policies (one broken, one that would decide
    /// differently), used as the current folder.
    func folderWithLookalikes() throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        try folder.write(#"{"bogus": true}"#, to: "low-data")
        try folder.write(#"{"rules": [{"name": "mine", "action": "placeholder", "reason": "the file in the current folder"}]}"#, to: "default")
        try folder.write(#"{"rules": [{"name": "mine", "action": "placeholder", "reason": "r"}]}"#, to: "mine")
        return folder
    }

    /// Runs the command with `folder` as its current folder (waited for off the cooperative pool).
    func run(_ arguments: [String], in folder: TemporaryFolder) async throws -> CLIRunner.Result {
        let environment = ["HOME": cli.home.path, "XDG_CONFIG_HOME": cli.home.file("config")], path = folder.path
        let (result, hung) = try await offThePool {
            try CLIRunner.run(PackagePaths.executable, arguments, environment: environment, stdin: nil, workingDirectory: path)
        }
        #expect(!hung && !result.crashed)
        return result
    }

    @Test func aBareNameReadsTheBundledPolicyAndSaysWhichFile() async throws {
        let folder = try folderWithLookalikes()
        let bundled = PackagePaths.root + "/policies"
        let check = try await run(["policy", "check", "low-data", "default"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.split(separator: "\n") == [
            "low-data: ok (11 rules, 33 cases; bundled \(bundled)/low-data.json)",
            "default: ok (7 rules, 24 cases; bundled \(bundled)/default.json)",
        ])
        let show = try await run(["policy", "show", "low-data"], in: folder)
        #expect(show.stdout.hasPrefix("policy low-data (bundled \(bundled)/low-data.json)\n"))
        let decision = try await run(["--network", "wifi", "--item", PackagePaths.root + "/examples/item.json", "--policy", "default"], in: folder)
        #expect(decision.status == 0 && !decision.stdout.contains("mine"))
    }

    @Test func aPathReadsTheFileAndIsNamedAsGiven() async throws {
        let folder = try folderWithLookalikes()
        let check = try await run(["policy", "check", "./low-data"], in: folder)
        #expect(check.status == 65)
        #expect(check.stderr.hasPrefix("imgpolicy: ./low-data: line 1: unknown key \"bogus\""))
        let mine = try await run(["policy", "check", "./default"], in: folder)
        #expect(mine.stdout == "./default: ok (1 rules, 0 cases)\n")
        let show = try await run(["policy", "show", "./default"], in: folder)
        #expect(show.stdout.hasPrefix("policy default (file ./default)\n"))
    }

    /// A bare name that is no bundled policy is a usage error; when a file of that name is in
    /// the current folder, the message says how to read it.
    @Test func anUnknownNameWithAFileOfThatNameSaysHowToReadTheFile() async throws {
        let folder = try folderWithLookalikes()
        let result = try await run(["policy", "check", "mine"], in: folder)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("imgpolicy: no policy named \"mine\" (known: "))
        #expect(result.stderr.hasSuffix("; a bare name is a bundled policy, never a file in the current folder: write ./mine to read that file\n"))
        let absent = try await run(["--item", PackagePaths.root + "/examples/item.json", "--policy", "absent"], in: folder)
        #expect(absent.status == 64 && !absent.stderr.contains("write ./"))
    }

    /// Issue 16: a symbolic-link loop named `loop.json` in `IMGPOLICY_POLICY_DIR` made
    /// `--policy loop` say "no policy named loop (known: …, loop, …)". A file found by name is read,
    /// and what is wrong with it is said (66), for a loop and for a link to nothing alike.
    @Test(arguments: [("loop", "loop.json", "is a symbolic link loop (too many levels of symbolic links)"),
                      ("dangling", "nothing.json", "is a symbolic link to a missing file (nothing.json)")])
    func aBrokenLinkFoundByNameSaysWhatIsWrong(_ name: String, _ destination: String, _ message: String) async throws {
        let folder = TemporaryFolder()
        try folder.link(name + ".json", to: destination)
        let environment = ["IMGPOLICY_POLICY_DIR": folder.path]
        for arguments in [["--item", PackagePaths.root + "/examples/item.json", "--policy", name], ["policy", "check", name],
                          ["policy", "show", name]] {
            let result = try await cli.run(arguments, environment: environment)
            #expect(result.status == 66, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "imgpolicy: \(folder.path)/\(name).json: \(message)\n")
        }
    }
}
