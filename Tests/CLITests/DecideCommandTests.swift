import Foundation
import Testing
import TestSupport

/// The built `imgpolicy` run as a process.
struct DecideCommandTests {
    let cli = CLIRunner()

    @Test func theCardsExactCommand() throws {
        let item = try cli.home.write(#"{"id": "x", "original": "https://img.example/x.jpg", "thumbnail": "https://img.example/x-t.jpg"}"#, to: "x.json")
        let result = try cli.run(["--network", "cellular", "--item", item])
        #expect(result.status == 0)
        #expect(result.stdout == "x: load thumbnail https://img.example/x-t.jpg (rule cellular-thumbnail: on cellular only the thumbnail is loaded (alwaysDownloadOriginalImage is off))\n")
        #expect(result.stderr.isEmpty)
    }

    @Test func theBundledExampleRuns() throws {
        let result = try cli.run(["--network", "wifi", "--item", "examples/items.json"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 3)
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.contains("load original") })
    }

    @Test func jsonHasExactlyTheDocumentedKeys() throws {
        let result = try cli.run(["decide", "--item", "examples/items.json", "--network", "offline", "--cached", "thumbnail", "--json"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["action", "variant", "url", "rule", "reason", "network"])
            #expect(object["network"] as? String == "offline")
        }
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        #expect(last["action"] as? String == "placeholder")
        #expect(last["variant"] is NSNull)
        #expect(last["url"] is NSNull)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["action"] as? String == "show-cached")
        #expect(first["variant"] as? String == "thumbnail")
        #expect(first["url"] as? String == "https://images.example.com/sunset/thumbnail.jpg")
    }

    @Test func networkPrecedenceIsFlagThenEnvironmentThenDetection() throws {
        let fromEnvironment = try cli.run(["--item", "examples/item.json", "--json"], environment: ["IMGPOLICY_NETWORK": "cellular,expensive"])
        #expect(fromEnvironment.stdout.contains(#""network":"cellular""#))
        let flagWins = try cli.run(["--item", "examples/item.json", "--json", "--network", "wifi"], environment: ["IMGPOLICY_NETWORK": "cellular"])
        #expect(flagWins.stdout.contains(#""network":"wifi""#))
        let badEnvironment = try cli.run(["--item", "examples/item.json"], environment: ["IMGPOLICY_NETWORK": "5g"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.contains("IMGPOLICY_NETWORK=\"5g\""))
    }

    @Test func settingsDecideAndSetOverridesWithoutWriting() throws {
        #expect(try cli.run(["settings", "set", "alwaysDownloadOriginalImage", "true"]).status == 0)
        let stored = try cli.run(["--network", "cellular", "--item", "examples/item.json", "--json"])
        #expect(stored.stdout.contains(#""rule":"cellular-always-original""#))
        let overridden = try cli.run(["--network", "cellular", "--item", "examples/item.json", "--json", "--set", "alwaysDownloadOriginalImage=off"])
        #expect(overridden.stdout.contains(#""rule":"cellular-thumbnail""#))
        // --set wrote nothing.
        #expect(try String(contentsOfFile: cli.settingsPath, encoding: .utf8).contains("true"))
        let again = try cli.run(["settings", "get", "alwaysDownloadOriginalImage"])
        #expect(again.stdout == "true\n")
    }

    @Test func policiesByNameAndFile() throws {
        let byName = try cli.run(["--network", "cellular", "--item", "examples/item.json", "--policy", "wifi-only", "--json"])
        #expect(byName.stdout.contains(#""action":"placeholder""#))
        let byFile = try cli.run(["--network", "wifi", "--expensive", "--item", "examples/item.json", "--policy", "policies/low-data.json", "--json"])
        #expect(byFile.stdout.contains(#""rule":"saving-thumbnail""#))
    }

    @Test func explainListsTheRulesTried() throws {
        let result = try cli.run(["--network", "cellular", "--item", "examples/item.json", "--explain"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("rule 1 original-cached"))
        #expect(result.stdout.contains("no: the original is not cached"))
        #expect(result.stdout.contains("rule 4 cellular-thumbnail [network is cellular or unknown and has a thumbnail] yes: load thumbnail"))
        #expect(!result.stdout.contains("rule 5"))
        let json = try cli.run(["--network", "cellular", "--item", "examples/item.json", "--explain", "--json"])
        #expect(json.stdout.split(separator: "\n").count == 1)
        #expect(json.stderr.contains("rule 4 cellular-thumbnail"))
    }

    @Test func readsItemsFromStandardInput() throws {
        let result = try cli.run(["--network", "offline", "--item", "-"], stdin: #"{"original": "https://a.example/o"}"#)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("placeholder (rule offline-placeholder"))
    }
}
