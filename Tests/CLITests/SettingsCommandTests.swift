import Foundation
import Testing
import TestSupport

struct SettingsCommandTests {
    let cli = CLIRunner()

    @Test func setGetListUnset() throws {
        #expect(try cli.run(["settings", "list"]).stdout == "alwaysDownloadOriginalImage = false (default of policy default)\n")
        #expect(try cli.run(["settings", "set", "alwaysDownloadOriginalImage", "yes"]).status == 0)
        #expect(try cli.run(["settings", "set", "volume", "0.5"]).status == 0)
        #expect(try cli.run(["settings", "set", "name", "42", "--string"]).status == 0)
        #expect(try cli.run(["settings", "list"]).stdout == "alwaysDownloadOriginalImage = true\nname = \"42\"\nvolume = 0.5\n")
        #expect(try cli.run(["settings", "get", "name"]).stdout == "\"42\"\n")
        #expect(try cli.run(["settings", "unset", "alwaysDownloadOriginalImage"]).status == 0)
        #expect(try cli.run(["settings", "get", "alwaysDownloadOriginalImage"]).stdout == "false\n")
    }

    /// Two real processes setting different keys at the same moment: no update is lost.
    @Test func twoProcessesSettingDifferentKeysLoseNothing() throws {
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
        group.wait()
        #expect(results.values == [0, 0])
        let listed = try cli.run(["settings", "list", "--settings", settings]).stdout.split(separator: "\n")
        let keys = Set(listed.compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(keys.count == 81)  // 80 keys set, plus the policy default listed
        for prefix in ["a", "b"] {
            for index in 1...40 { #expect(keys.contains("\(prefix)-\(index)")) }
        }
    }
}
