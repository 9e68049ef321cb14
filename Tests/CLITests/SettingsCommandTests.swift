import Foundation
import Testing
import TestSupport

struct SettingsCommandTests {
    let cli = CLIRunner()

    @Test func setGetListUnset() async throws {
        #expect(try await cli.run(["settings", "list"]).stdout == "alwaysDownloadOriginalImage = false (default of policy default)\n")
        #expect(try await cli.run(["settings", "set", "alwaysDownloadOriginalImage", "yes"]).status == 0)
        #expect(try await cli.run(["settings", "set", "volume", "0.5"]).status == 0)
        #expect(try await cli.run(["settings", "set", "name", "42", "--string"]).status == 0)
        #expect(try await cli.run(["settings", "list"]).stdout == "alwaysDownloadOriginalImage = true\nname = \"42\"\nvolume = 0.5\n")
        #expect(try await cli.run(["settings", "get", "name"]).stdout == "\"42\"\n")
        #expect(try await cli.run(["settings", "unset", "alwaysDownloadOriginalImage"]).status == 0)
        #expect(try await cli.run(["settings", "get", "alwaysDownloadOriginalImage"]).stdout == "false\n")
    }

    /// A settings file that is a symbolic link (a dotfiles checkout) stays a link: its target is
    /// replaced atomically. A settings path that is a device is never replaced.
    @Test func aLinkedSettingsFileKeepsItsLinkAndADeviceIsNeverReplaced() async throws {
        let target = try cli.home.write("{\"name\": \"x\"}\n", to: "dotfiles/settings.json")
        try cli.home.link("config/imgpolicy/settings.json", to: target)
        #expect(try await cli.run(["settings", "set", "alwaysDownloadOriginalImage", "yes"]).status == 0)
        var info = stat()
        #expect(lstat(cli.settingsPath, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(try cli.home.read("dotfiles/settings.json").contains("\"alwaysDownloadOriginalImage\": true"))
        // The lock lives next to the real file, shared by every path to it.
        #expect(try cli.home.list("dotfiles") == ["settings.json", "settings.json.lock"])
        // A device like /dev/null, made in the test's folder (needs root; /dev is never touched).
        guard getuid() == 0 else {
            Issue.record("skipped: mknod needs root (CI runs as root)")
            return
        }
        let null = cli.home.file("devices/null")
        try FileManager.default.createDirectory(atPath: cli.home.file("devices"), withIntermediateDirectories: false)
        try #require(mknod(null, S_IFCHR | 0o666, dev_t((1 << 8) | 3)  /* makedev(1, 3) */) == 0)
        let device = try await cli.run(["settings", "set", "a", "1", "--settings", null])
        #expect(device.status == 66)
        #expect(device.stderr == "imgpolicy: \(null): is a character device, not a regular file\n")
        #expect(lstat(null, &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
        #expect(try cli.home.list("devices") == ["null"], "no lock file next to a refused device")
    }

    /// Two real processes setting different keys at the same moment: no update is lost.
    @Test func twoProcessesSettingDifferentKeysLoseNothing() async throws {
        let settings = cli.home.file("shared/settings.json")
        try await setConcurrently([("a", settings), ("b", settings)], count: 40)
    }

    /// Three real processes writing one file through two symbolic links and its own path: every
    /// path takes the same lock, so no update is lost and the links stay links.
    @Test func processesWritingThroughLinksToOneFileLoseNothing() async throws {
        let real = try cli.home.write("{}\n", to: "shared/real.json")
        try cli.home.link("l1.json", to: real)
        try cli.home.link("links/l2.json", to: "../shared/real.json")
        try await setConcurrently([("a", cli.home.file("l1.json")), ("b", cli.home.file("links/l2.json")), ("c", real)], count: 40)
        var info = stat()
        for link in ["l1.json", "links/l2.json"] {
            #expect(lstat(cli.home.file(link), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        }
        #expect(try cli.home.list("shared") == ["real.json", "real.json.lock"])
        #expect(try cli.home.list("links") == ["l2.json"])
    }

    /// Runs one shell loop per (prefix, path) at once, each setting `<prefix>-1`…`<prefix>-count`
    /// with real processes, and checks that every key of every loop is in the file.
    func setConcurrently(_ writers: [(prefix: String, path: String)], count: Int) async throws {
        let script = """
            for i in $(seq 1 $3); do "$0" settings set "$1-$i" true --settings "$2" || exit 1; done
            """
        let group = DispatchGroup()
        let results = LockedList<Int32>()
        for (prefix, path) in writers {
            group.enter()
            Thread.detachNewThread {
                let result = try? ProcessResult.run("/bin/sh", ["-c", script, PackagePaths.executable, prefix, path, String(count)])
                results.append(result?.status ?? -1)
                group.leave()
            }
        }
        try await offThePool { group.wait() }
        #expect(results.values == Array(repeating: 0, count: writers.count))
        let listed = try await cli.run(["settings", "list", "--settings", writers[0].path]).stdout.split(separator: "\n")
        let keys = Set(listed.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(keys.count == writers.count * count + 1)  // the keys set, plus the policy default listed
        for (prefix, _) in writers {
            for index in 1...count { #expect(keys.contains("\(prefix)-\(index)"), "\(prefix)-\(index) was lost") }
        }
    }
}
