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
        #expect(lines.first == "policy default (bundled \(PackagePaths.root)/policies/default.json)")
        #expect(lines.contains("  1. free-link: when network is wifi or wired and not expensive and not constrained -> ahead 20, behind 5, decided"))
        #expect(lines.contains("  2. cellular-thumbnails: when network is cellular or unknown and not constrained and not roaming "
                               + "-> ahead 5, behind 0, thumbnails"))
        #expect(lines.contains("  otherwise -> nothing"))
        #expect(lines.contains("  1. when always -> cancel"))
        let table = lines.filter { $0.contains(" -> ") && $0.contains("; cancel; ") }
        #expect(table.count == 60, "2 settings values × 5 kinds × 3 expensive/roaming × 2 constrained")
        #expect(table.contains { $0.hasPrefix("cellular  yes       no          no       off") && $0.hasSuffix("-> ahead 5, behind 0, thumbnails (cellular-thumbnails); cancel; shown as they are") })
        #expect(table.contains { $0.hasPrefix("wifi      no        no          no       on") && $0.hasSuffix("(free-link); cancel; revalidated") })
        #expect(table.contains { $0.hasPrefix("cellular  yes       no          yes") && $0.hasSuffix("-> nothing (no entry); cancel; shown as they are") })
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

    /// `revalidateStale` is shown for every network state, as the prefetch plan and the running
    /// loads are, in text and JSON: per row, whether a stale image is revalidated there.
    @Test(arguments: [("any-link", true), ("never", false), (nil, false)] as [(String?, Bool)])
    func showPrintsWhetherStaleImagesAreRevalidatedPerNetworkState(_ option: String?, _ onCellular: Bool) async throws {
        let path = try cli.home.write("""
            {"rules": [{"name": "all", "action": "load", "variant": "original", "reason": "r"}]\(option.map { #", "revalidateStale": "\#($0)""# } ?? "")}
            """, to: "p.json")
        let text = try await cli.run(["policy", "show", path])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasSuffix("-> prefetch (entry); running loads; stale images") })
        func row(_ prefix: String) -> String? { lines.first { $0.hasPrefix(prefix) && $0.contains(" -> ") } }
        let wifi = option == "never" ? "shown as they are" : "revalidated"
        #expect(row("wifi      no        no ")?.hasSuffix("; \(wifi)") == true)
        #expect(row("cellular  yes       no ")?.hasSuffix(onCellular ? "; revalidated" : "; shown as they are") == true)
        #expect(lines.contains { $0.hasPrefix("revalidate stale images: ") && $0.hasSuffix("(per network state in the table below; never offline or captive)") })
        #expect(row("offline")?.hasSuffix("; shown as they are") == true)
        let json = try await cli.run(["policy", "show", path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let table = try #require(object["table"] as? [[String: Any]])
        #expect(table.allSatisfy { $0["revalidatesStale"] is Bool })
        let cellular = try #require(table.first { $0["network"] as? String == "cellular" && $0["expensive"] as? Bool == true && $0["roaming"] as? Bool == false })
        #expect(cellular["revalidatesStale"] as? Bool == onCellular)
        let offline = try #require(table.first { $0["network"] as? String == "offline" })
        #expect(offline["revalidatesStale"] as? Bool == false)
        let freeWifi = try #require(table.first { $0["network"] as? String == "wifi" && $0["expensive"] as? Bool == false && $0["constrained"] as? Bool == false })
        #expect(freeWifi["revalidatesStale"] as? Bool == (option != "never"))
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
