import Foundation
import Testing
import TestSupport
@testable import cli

/// `imgpolicy --version`, run as a process, and how the version is kept in step with releases.
struct VersionTests {
    let cli = CLIRunner()

    @Test func versionPrintsTheOneVersionAndNothingElse() async throws {
        let result = try await cli.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == Version.current + "\n")
        #expect(result.stderr.isEmpty)
    }

    @Test func helpListsVersion() async throws {
        let result = try await cli.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("--version"))
    }

    @Test func versionIsSemantic() throws {
        let pattern = #/[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?/#
        #expect(Version.current.wholeMatch(of: pattern) != nil, "\(Version.current) is not MAJOR.MINOR.PATCH[-PRERELEASE]")
    }

    /// A release is the commit tagged `v<version>`: when the checkout is such a commit, the tag and
    /// `Version.current` must agree (a release that forgot to change Version.swift fails here).
    @Test func releaseTagMatchesVersion() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else {
            Issue.record("git is missing: cannot check the release tag against Version.swift")
            return
        }
        let tags = try await offThePool {
            try ProcessResult.run("/usr/bin/git", ["-C", PackagePaths.root, "tag", "--points-at", "HEAD", "--list", "v*"])
        }
        try #require(tags.status == 0, "git tag failed: \(tags.stderr)")
        for tag in tags.stdout.split(separator: "\n") {
            #expect(tag == "v" + Version.current, "HEAD is tagged \(tag) but Version.swift says \(Version.current)")
        }
    }
}
