import Policy
import Testing
import TestSupport

/// A policy file is rejected with the file, the rule and what is wrong, and never crashes.
struct PolicyValidationTests {
    struct Bad: Sendable, CustomTestStringConvertible {
        var label: String
        var json: String
        var message: String
        var testDescription: String { label }
    }

    static let catchAll = #"{"name": "end", "action": "placeholder", "reason": "r"}"#

    static let bad: [Bad] = [
        Bad(label: "unknown top-level key", json: #"{"rulez": []}"#, message: #"x.json: line 1: unknown key "rulez""#),
        Bad(label: "no rules", json: #"{"rules": []}"#, message: "x.json: the policy has no rule"),
        Bad(label: "rules missing", json: #"{"settings": {}}"#, message: #"x.json: line 1: "rules" is missing"#),
        Bad(label: "unknown network kind",
            json: #"{"rules": [{"name": "a", "when": {"network": ["wlan"]}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"x.json: line 1: rule 1 ("a"): unknown network kind "wlan""#),
        Bad(label: "unknown action",
            json: #"{"rules": [{"name": "a", "action": "download", "variant": "original", "reason": "r"}]}"#,
            message: #"rule 1 ("a"): unknown action "download""#),
        Bad(label: "unknown variant",
            json: #"{"rules": [{"name": "a", "action": "load", "variant": "hd", "reason": "r"}]}"#,
            message: #"rule 1 ("a"): unknown variant "hd""#),
        Bad(label: "unknown cached variant",
            json: #"{"rules": [{"name": "a", "when": {"cached": {"hd": true}}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"unknown key "hd" in "cached" (expected "original", "thumbnail", "covering" or "any")"#),
        Bad(label: "unknown condition key",
            json: #"{"rules": [{"name": "a", "when": {"metered": true}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"rule 1 ("a"): unknown key "metered""#),
        Bad(label: "unknown rule key",
            json: #"{"rules": [{"name": "a", "action": "placeholder", "reason": "r", "priority": 1}]}"#,
            message: #"rule 1 ("a"): unknown key "priority""#),
        Bad(label: "load without variant",
            json: #"{"rules": [{"name": "a", "action": "load", "reason": "r"}]}"#,
            message: #"the action "load" needs a "variant""#),
        Bad(label: "placeholder with variant",
            json: #"{"rules": [{"name": "a", "action": "placeholder", "variant": "original", "reason": "r"}]}"#,
            message: #"the placeholder action takes no "variant""#),
        Bad(label: "setting read but not declared",
            json: #"{"rules": [{"name": "a", "when": {"settings": {"hd": true}}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"x.json: line 1: rule 1 ("a"): reads the setting "hd", which the policy does not declare"#),
        Bad(label: "setting default not boolean",
            json: #"{"settings": {"hd": "yes"}, "rules": [\#(catchAll)]}"#,
            message: #"the default of "hd" must be true or false, found a string"#),
        Bad(label: "no final catch-all",
            json: #"{"rules": [{"name": "a", "when": {"network": "wifi"}, "action": "load", "variant": "original", "reason": "r"}]}"#,
            message: #"rule 1 ("a"): the last rule must be a catch-all"#),
        Bad(label: "a rule after a catch-all never fires",
            json: #"{"rules": [\#(catchAll), {"name": "b", "action": "placeholder", "reason": "r"}]}"#,
            message: #"rule 2 ("b"): the rule can never fire: earlier rules match every input it matches"#),
        Bad(label: "a rule shadowed by earlier ones",
            json: #"""
            {"rules": [
              {"name": "wifi", "when": {"network": "wifi"}, "action": "load", "variant": "original", "reason": "r"},
              {"name": "not-wifi", "when": {"network": ["cellular", "wired", "offline", "unknown"]}, "action": "placeholder", "reason": "r"},
              {"name": "wifi-expensive", "when": {"network": "wifi", "expensive": true}, "action": "placeholder", "reason": "r"},
              \#(catchAll)]}
            """#,
            message: #"x.json: line 4: rule 3 ("wifi-expensive"): the rule can never fire"#),
        Bad(label: "an empty network list",
            json: #"{"rules": [{"name": "a", "when": {"network": []}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"rule 1 ("a"): "network" lists no network kind"#),
        Bad(label: "show a thumbnail that may not be cached",
            json: #"{"rules": [{"name": "a", "action": "show-cached", "variant": "thumbnail", "reason": "r"}]}"#,
            message: #"rule 1 ("a"): shows the cached thumbnail but can fire when it is not cached"#),
        Bad(label: "load a thumbnail the item may not have",
            json: #"{"rules": [{"name": "a", "when": {"network": "cellular"}, "action": "load", "variant": "thumbnail", "reason": "r"}, \#(catchAll)]}"#,
            message: #"rule 1 ("a"): loads the thumbnail but can fire for an item without one"#),
        // Issue 16: offline, nothing can be loaded; such a rule used to be accepted.
        Bad(label: "load offline",
            json: #"{"rules": [{"name": "a", "when": {"network": ["offline"]}, "action": "load", "variant": "original", "reason": "r"}, \#(catchAll)]}"#,
            message: #"x.json: line 1: rule 1 ("a"): loads the original but can fire offline, where nothing can be loaded (for example network=offline"#),
        Bad(label: "load offline among other networks",
            json: #"{"rules": [{"name": "a", "when": {"network": ["wifi", "offline"], "hasThumbnail": true}, "action": "load", "variant": "thumbnail", "reason": "r"}, \#(catchAll)]}"#,
            message: #"rule 1 ("a"): loads the thumbnail but can fire offline, where nothing can be loaded"#),
        Bad(label: "duplicate rule names",
            json: #"{"rules": [{"name": "end", "when": {"network": "wifi"}, "action": "placeholder", "reason": "r"}, \#(catchAll)]}"#,
            message: #"rule 2 ("end"): another rule already has this name"#),
        Bad(label: "a case with an unknown rule",
            json: #"{"rules": [\#(catchAll)], "cases": [{"network": "wifi", "expect": {"action": "placeholder", "rule": "nope"}}]}"#,
            message: #"case 1: expects the rule "nope", which the policy does not have"#),
        Bad(label: "a case with an undeclared setting",
            json: #"{"rules": [\#(catchAll)], "cases": [{"network": "wifi", "settings": {"x": true}, "expect": {"action": "placeholder"}}]}"#,
            message: #"case 1: sets "x", which the policy does not declare"#),
        Bad(label: "a case with an unknown network",
            json: #"{"rules": [\#(catchAll)], "cases": [{"network": "5g", "expect": {"action": "placeholder"}}]}"#,
            message: #"case 1: unknown network kind "5g""#),
        Bad(label: "a wrong type on line 3",
            json: "{\n  \"rules\": [\n    {\"name\": 7}\n  ]\n}",
            message: #"x.json: line 3: rule 1: "name" must be a string, found a number"#),
        Bad(label: "not JSON", json: "rules: []", message: "x.json: line 1: unexpected 'r', expected a value"),
        Bad(label: "empty", json: "", message: "x.json: line 1: the file is empty"),
        Bad(label: "an array", json: "[]", message: "x.json: line 1: expected the policy to be an object, found an array"),
        Bad(label: "deep nesting", json: String(repeating: "[", count: 100_000), message: "nesting deeper than 64 levels"),
        Bad(label: "too many settings",
            json: #"{"settings": {"a":true,"b":true,"c":true,"d":true,"e":true,"f":true,"g":true,"h":true,"i":true}, "rules": [\#(catchAll)]}"#,
            message: "9 settings, at most 8 are allowed"),
    ]

    @Test("a bad policy is rejected", arguments: bad)
    func rejected(_ bad: Bad) {
        do {
            _ = try ImagePolicy(json: Array(bad.json.utf8), name: "x", source: "x.json")
            Issue.record("accepted: \(bad.json)")
        } catch {
            #expect(error.description.contains(bad.message), "got: \(error.description)")
            #expect(error.code == .invalid || error.code == .malformed)
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func aMissingFileIsNotFound() {
        #expect(throws: DataFileError(.notFound, source: "/nonexistent/p.json", message: "no such file")) {
            try ImagePolicy.load(contentsOf: "/nonexistent/p.json")
        }
    }

    @Test func garbageNeverCrashes() {
        var generator = SeededGenerator(seed: 0x6A5B_A6E, label: "garbage policies")
        for length in [1, 2, 7, 64, 4096] {
            for _ in 0..<50 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(throws: DataFileError.self) { try ImagePolicy(json: bytes, name: "x", source: "x.json") }
            }
        }
    }

    @Test func everyPrefixOfAValidPolicyFailsCleanly() throws {
        let text = #"{"settings": {"s": false}, "rules": [{"name": "a", "when": {"settings": {"s": true}}, "action": "load", "variant": "original", "reason": "r"}, {"name": "b", "action": "placeholder", "reason": "r"}]}"#
        let bytes = Array(text.utf8)
        _ = try ImagePolicy(json: bytes, name: "x", source: "x.json")
        for end in 0..<bytes.count {
            #expect(throws: DataFileError.self) { try ImagePolicy(json: bytes[0..<end], name: "x", source: "x.json") }
        }
    }

    @Test func explainWalksTheRulesUpToTheOneThatFired() {
        let policy = ImagePolicy.default
        let input = PolicyInput(network: NetworkState(.cellular), cached: [], hasThumbnail: true, settings: policy.defaultSettings)
        let trace = policy.explain(input)
        #expect(trace.map(\.rule.name) == ["original-cached", "wifi-original", "cellular-always-original", "cellular-thumbnail"])
        #expect(trace.map(\.matched) == [false, false, false, true])
        #expect(trace[1].mismatch == "network is cellular, not wifi or wired")
        #expect(trace[2].mismatch == "setting alwaysDownloadOriginalImage is off")
    }

    @Test func aRuleThatTestsCaptiveDecidesCaptiveNetworks() throws {
        let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!)
        let portalAware = try ImagePolicy(json: Array(#"""
            {"rules": [{"name": "portal", "when": {"captive": true}, "action": "load", "variant": "original", "reason": "try anyway"},
                       {"name": "offline", "when": {"network": "offline"}, "action": "placeholder", "reason": "r"},
                       {"name": "all", "action": "load", "variant": "original", "reason": "r"}]}
            """#.utf8), name: "x", source: "x.json")
        #expect(portalAware.readsCaptive)
        #expect(portalAware.decide(item, network: NetworkState(.wifi, isCaptive: true), settings: portalAware.defaultSettings,
                                   cached: []).rule == "portal")
        #expect(portalAware.truthTable().contains { $0.input.network.isCaptive })
        let plain = try ImagePolicy(json: Array(#"""
            {"rules": [{"name": "offline", "when": {"network": "offline"}, "action": "placeholder", "reason": "r"},
                       {"name": "all", "action": "load", "variant": "original", "reason": "r"}]}
            """#.utf8), name: "y", source: "y.json")
        #expect(!plain.readsCaptive)
        let decision = plain.decide(item, network: NetworkState(.wifi, isCaptive: true), settings: plain.defaultSettings, cached: [])
        #expect(decision.rule == "offline")
        #expect(decision.network == NetworkState(.wifi, isCaptive: true))  // the decision still tells the real state
        #expect(!plain.truthTable().contains { $0.input.network.isCaptive })
    }

    @Test func roamingConditionsAreReadAndChecked() throws {
        let policy = try ImagePolicy(json: Array(#"""
            {"rules": [{"name": "abroad", "when": {"roaming": true}, "action": "placeholder", "reason": "r"},
                       {"name": "all", "action": "load", "variant": "original", "reason": "r"}]}
            """#.utf8), name: "x", source: "x.json")
        #expect(policy.rules[0].condition == RuleCondition(roaming: true))
        #expect(policy.rules[0].condition.summary == "roaming")
        let input = PolicyInput(network: NetworkState(.cellular, isRoaming: true), cached: [], hasThumbnail: true, settings: policy.defaultSettings)
        #expect(input.network.isExpensive)
        #expect(policy.outcome(for: input).ruleIndex == 0)
        #expect(throws: DataFileError.self) {
            try ImagePolicy(json: Array(#"{"rules": [{"name": "a", "when": {"roaming": "yes"}, "action": "placeholder", "reason": "r"}]}"#.utf8),
                            name: "x", source: "x.json")
        }
    }
}
