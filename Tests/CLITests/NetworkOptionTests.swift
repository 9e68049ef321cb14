import Foundation
import Testing
import TestSupport

/// `--network` and `IMGPOLICY_NETWORK` are read by one parser (any case, flags after a comma),
/// and the JSON `network` of a decision is the whole state it was decided on.
struct NetworkOptionTests {
    let cli = CLIRunner()

    /// The `network` member of each JSON line of `result`.
    func networks(_ result: CLIRunner.Result) throws -> [String?] {
        try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object["network"] as? String
        }
    }

    /// Each text the variable accepts, the flag accepts too, with the same decision: the quick
    /// path (`--network X`) and swift-argument-parser's (`--network=X`) alike.
    @Test(arguments: ["WIFI", "Cellular", " cellular , ROAMING ", "wired,expensive", "offline", "wifi,captive"])
    func theFlagAndTheVariableAcceptTheSameText(_ text: String) async throws {
        let fromVariable = try await cli.run(["--item", "examples/item.json", "--json"], environment: ["IMGPOLICY_NETWORK": text])
        #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
        for arguments in [["--item", "examples/item.json", "--json", "--network", text], ["decide", "--network=\(text)", "--item", "examples/item.json", "--json"]] {
            let fromFlag = try await cli.run(arguments)
            #expect(fromFlag.status == 0, "\(arguments): \(fromFlag.stderr)")
            #expect(fromFlag.stdout == fromVariable.stdout)
        }
    }

    /// What the variable refuses, the flag refuses: exit 64, one line naming the flag or the variable.
    @Test(arguments: ["5g", "wifi,fast", "", "wifi,", "auto,expensive"])
    func theFlagAndTheVariableRefuseTheSameText(_ text: String) async throws {
        let fromFlag = try await cli.run(["--item", "examples/item.json", "--network", text])
        #expect(fromFlag.status == 64)
        #expect(fromFlag.stderr == "imgpolicy: --network \"\(text)\" is not a network state (expected auto, or wifi, cellular, wired, "
                + "offline or unknown, optionally followed by ,expensive ,constrained ,roaming ,captive; any case)\n")
        if !text.isEmpty {  // an empty variable is unset
            let fromVariable = try await cli.run(["--item", "examples/item.json"], environment: ["IMGPOLICY_NETWORK": text])
            #expect(fromVariable.status == 64)
            #expect(fromVariable.stderr.hasPrefix("imgpolicy: IMGPOLICY_NETWORK=\"\(text)\" is not a network state"))
        }
    }

    /// A captive Wi-Fi is decided as offline; the JSON says `wifi,captive`, not `wifi`, whether
    /// the state came from the variable, the flag or `--captive`.
    @Test func theJSONNetworkIsTheWholeStateTheDecisionWasMadeOn() async throws {
        let runs = [
            try await cli.run(["--item", "examples/item.json", "--json"], environment: ["IMGPOLICY_NETWORK": "wifi,captive"]),
            try await cli.run(["--item", "examples/item.json", "--json", "--network", "wifi,captive"]),
            try await cli.run(["--item", "examples/item.json", "--json", "--network", "wifi", "--captive"]),
        ]
        for run in runs {
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try networks(run) == ["wifi,captive"])
            #expect(run.stdout.contains(#""rule":"offline-placeholder""#))
        }
        let roaming = try await cli.run(["--item", "examples/item.json", "--json", "--network", "cellular", "--roaming"])
        #expect(try networks(roaming) == ["cellular,expensive,roaming"])
    }
}
