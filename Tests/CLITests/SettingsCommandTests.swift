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
        #expect(try cli.home.list("dotfiles") == ["settings.json"])
        let device = try await cli.run(["settings", "set", "a", "1", "--settings", "/dev/null"])
        #expect(device.status == 66)
        #expect(device.stderr == "imgpolicy: /dev/null: is a character device, not a regular file\n")
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }

    /// Two real processes setting different keys at the same moment: no update is lost.
    @Test func twoProcessesSettingDifferentKeysLoseNothing() async throws {
        let settings = cli.home.file("shared/settings.json")
        let script = """
            for i in $(seq 1 40); do "$0" settings set "$1-$i" true --settings "$2" || exit 1; done
            """
        let group = DispatchGroup()
        let results = LockedList<Int32>()
        for prefix in ["a", "b"] {
            group.enter()
            Thread.detachNewThread {
                let result = try? ProcessResult.run("/bin/sh", ["-c", script, PackagePaths.executable, prefix, settings])
                results.append(result?.status ?? -1)
                group.leave()
            }
        }
        try await offThePool { group.wait() }
        #expect(results.values == [0, 0])
        let listed = try await cli.run(["settings", "list", "--settings", settings]).stdout.split(separator: "\n")
        let keys = Set(listed.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(keys.count == 81)  // 80 keys set, plus the policy default listed
        for prefix in ["a", "b"] {
            for index in 1...40 { #expect(keys.contains("\(prefix)-\(index)")) }
        }
    }
}
