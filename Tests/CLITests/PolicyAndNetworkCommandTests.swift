import Foundation
import Testing
import TestSupport

struct PolicyAndNetworkCommandTests {
    let cli = CLIRunner()

    @Test func checkPassesTheBundledPolicies() async throws {
        let result = try await cli.run(["policy", "check", "policies/default.json", "policies/low-data.json", "policies/wifi-only.json",
                                  "policies/always-original.json"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 4)
        #expect(result.stdout.contains("policies/default.json: ok (7 rules, 24 cases)"))
    }

    @Test func checkFailsAPolicyWhoseCasesFail() async throws {
        let path = try cli.home.write("""
            {"rules": [{"name": "all", "action": "placeholder", "reason": "r"}],
             "cases": [
               {"network": "wifi", "expect": {"action": "load", "variant": "original"}}
             ]}
            """, to: "p.json")
        let result = try await cli.run(["policy", "check", path, "policies/default.json"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("\(path): line 3: case 1: expected load original, got placeholder by rule all"))
        #expect(result.stdout.contains("policies/default.json: ok"))
    }

    /// Issue 16: a rule that loads an image offline can never run; `policy check` accepted it.
    @Test func checkRefusesARuleThatLoadsOffline() async throws {
        let path = try cli.home.write("""
            {"rules": [
              {"name": "offline-original", "when": {"network": ["offline"]}, "action": "load", "variant": "original", "reason": "r"},
              {"name": "rest", "action": "placeholder", "reason": "r"}
            ]}
            """, to: "p.json")
        let result = try await cli.run(["policy", "check", path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("imgpolicy: \(path): line 2: rule 1 (\"offline-original\"): loads the original but can fire offline, where nothing can be loaded"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func tableListsEveryInput() async throws {
        let text = try await cli.run(["policy", "table"])
        #expect(text.status == 0)
        #expect(text.stdout.split(separator: "\n").count == 241)
        let json = try await cli.run(["policy", "table", "low-data", "--json"])
        let rows = json.stdout.split(separator: "\n")
        #expect(rows.count == 324)  // low-data tests roaming and slow: 120 inputs + 60 roaming ones, + 144 slow ones (never offline)
        var roamingRows = 0
        for row in rows {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any])
            #expect(object["action"] != nil && object["rule"] != nil && object["network"] != nil)
            if object["roaming"] as? Bool == true {
                roamingRows += 1
                #expect(object["action"] as? String != "load", "low-data loads nothing new when roaming: \(row)")
            }
        }
        #expect(roamingRows == 108)  // 60, + 48 slow ones
        // The text table shows the roaming column for a policy that tests it, and only then.
        let lowData = try await cli.run(["policy", "table", "low-data"]).stdout.split(separator: "\n")
        #expect(lowData.first?.hasPrefix("network   expensive constrained roaming slow cached") == true, "\(lowData.first ?? "")")
        #expect(lowData.dropFirst().filter { $0.split(separator: " ", omittingEmptySubsequences: true)[3] == "yes" }.count == 108)
        #expect(text.stdout.split(separator: "\n").first?.contains("roaming") == false)
    }

    @Test func networkExplainsAFakeTree() async throws {
        let root = cli.home
        try root.write("1\n", to: "sys/devices/pci0/net/wwan0/type")
        try root.write("DEVTYPE=wwan\n", to: "sys/devices/pci0/net/wwan0/uevent")
        try root.write("up\n", to: "sys/devices/pci0/net/wwan0/operstate")
        try root.write("1\n", to: "sys/devices/pci0/net/wwan0/carrier")
        try root.link("sys/class/net/wwan0", to: "../../devices/pci0/net/wwan0")
        try root.write("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nwwan0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\n",
                       to: "proc/net/route")
        let result = try await cli.run(["network", "--root", root.path])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("network: cellular,expensive\n"))
        #expect(result.stdout.contains("wwan0 is cellular (DEVTYPE=wwan)"))
        let overridden = try await cli.run(["network", "--root", root.path], environment: ["IMGPOLICY_NETWORK": "wifi"])
        #expect(overridden.stdout.hasPrefix("network: wifi (from IMGPOLICY_NETWORK"))
    }

    @Test func networkOnThisMachineSaysSomething() async throws {
        let result = try await cli.run(["network"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("network: "))
    }
}
