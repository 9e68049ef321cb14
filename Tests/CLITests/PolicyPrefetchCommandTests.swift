import Foundation
import Testing
import TestSupport

/// `imgpolicy policy show` prints a policy's prefetch section, its running-loads option and the
/// plan per network state; `policy check` runs the prefetch and running-loads cases.
struct PolicyPrefetchCommandTests {
    let cli = CLIRunner()

    @Test func showPrintsTheDefaultPrefetchSectionAndTable() async throws {
        let result = try await cli.run(["policy", "show"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "policy default")
        #expect(lines.contains("  1. free-link: when network is wifi or wired and not expensive and not constrained -> ahead 20, behind 5, decided"))
        #expect(lines.contains("  2. cellular-thumbnails: when network is cellular or unknown and not constrained and not roaming "
                               + "-> ahead 5, behind 0, thumbnails"))
        #expect(lines.contains("  otherwise -> nothing"))
        #expect(lines.contains("  1. when always -> cancel"))
        let table = lines.filter { $0.contains(" -> ") && $0.hasSuffix("; cancel") }
        #expect(table.count == 60, "2 settings values × 5 kinds × 3 expensive/roaming × 2 constrained")
        #expect(table.contains { $0.hasPrefix("cellular  yes       no          no       off") && $0.hasSuffix("-> ahead 5, behind 0, thumbnails (cellular-thumbnails); cancel") })
        #expect(table.contains { $0.hasPrefix("wifi      no        no          no       on") && $0.hasSuffix("(free-link); cancel") })
        #expect(table.contains { $0.hasPrefix("cellular  yes       no          yes") && $0.hasSuffix("-> nothing (no entry); cancel") })
    }

    @Test func showJSONIsOneObjectWithTheSectionTheOptionAndTheTable() async throws {
        let result = try await cli.run(["policy", "show", "always-original", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["name"] as? String == "always-original")
        let prefetch = try #require(object["prefetch"] as? [[String: Any]])
        #expect(prefetch.count == 2)
        #expect(prefetch.first?["ahead"] as? Int == 20 && prefetch.first?["behind"] as? Int == 5 && prefetch.first?["variants"] as? String == "decided")
        #expect((prefetch.first?["when"] as? [String: Any])?["network"] as? [String] == ["wifi", "wired"])
        let running = try #require(object["runningLoadsOnWorseNetwork"] as? [[String: Any]])
        #expect(running.map { $0["then"] as? String } == ["cancel", "finish"])
        let table = try #require(object["table"] as? [[String: Any]])
        #expect(table.count == 30)
        let cellular = try #require(table.first { $0["network"] as? String == "cellular" && $0["expensive"] as? Bool == true
                                                  && $0["roaming"] as? Bool == false && $0["constrained"] as? Bool == false })
        #expect((cellular["prefetch"] as? [String: Any])?["ahead"] as? Int == 5)
        #expect(cellular["prefetchEntry"] as? Int == 2)
        #expect(cellular["runningLoads"] as? String == "finish")
        let roaming = try #require(table.first { $0["roaming"] as? Bool == true })
        #expect(roaming["runningLoads"] as? String == "cancel" && roaming["prefetchEntry"] is NSNull)
    }

    @Test func checkReportsAWrongPrefetchCase() async throws {
        let path = try cli.home.write("""
            {"rules": [{"name": "all", "action": "load", "variant": "original", "reason": "r"}],
             "prefetch": [{"when": {"network": "wifi"}, "ahead": 20}],
             "cases": [
               {"network": "wifi", "expect": {"prefetch": {"ahead": 20}}},
               {"name": "cell", "network": "cellular", "expect": {"prefetch": {"ahead": 5, "variants": "thumbnails"}, "runningLoads": "finish"}}
             ]}
            """, to: "p.json")
        let result = try await cli.run(["policy", "check", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("\(path): line 5: case 2 (cell): expected prefetch ahead 5, behind 0, thumbnails, got nothing; "
                                       + "expected running loads finish, got cancel"), "\(result.stderr)")
        #expect(!result.stderr.contains("case 1"))
    }

    @Test func aBadPrefetchSectionExits65WithOneLine() async throws {
        let path = try cli.home.write("""
            {"rules": [{"name": "all", "action": "placeholder", "reason": "r"}],
             "prefetch": [{"name": "far", "ahead": 5000}]}
            """, to: "p.json")
        for arguments in [["policy", "show", path], ["policy", "check", path]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 65)
            #expect(result.stderr == "imgpolicy: \(path): line 2: prefetch entry 1 (\"far\"): \"ahead\" is 5000 rows, at most 1000 are allowed\n")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func checkPassesEveryBundledPolicyWithItsPrefetchCases() async throws {
        let files = ["always-original", "default", "low-data", "thumbnail-when-enough", "wifi-only"].map { "policies/\($0).json" }
        let result = try await cli.run(["policy", "check"] + files)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == files.count)
    }
}
