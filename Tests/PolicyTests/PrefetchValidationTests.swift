import Policy
import Testing

/// A policy's `prefetch` section, `runningLoadsOnWorseNetwork` option and the cases that expect
/// them are read strictly: every mistake is refused with a one-line error naming the file, the
/// entry or case, and what is wrong.
struct PrefetchValidationTests {
    struct Bad: Sendable, CustomTestStringConvertible {
        var label: String
        var json: String
        var message: String
        var testDescription: String { label }
    }

    static let rules = #""rules": [{"name": "end", "action": "placeholder", "reason": "r"}]"#
    static let catchAll = #"{"name": "end", "action": "placeholder", "reason": "r"}"#

    /// A policy with `extra` members after its rules.
    static func policy(_ extra: String) -> String { "{\(rules), \(extra)}" }

    static let bad: [Bad] = [
        Bad(label: "prefetch is not an array", json: policy(#""prefetch": {"ahead": 5}"#),
            message: #"x.json: line 1: "prefetch" must be an array, found an object"#),
        Bad(label: "an entry is not an object", json: policy(#""prefetch": [5]"#),
            message: #"x.json: line 1: prefetch entry 1: expected a prefetch entry to be an object, found a number"#),
        Bad(label: "an unknown key in an entry", json: policy(#""prefetch": [{"name": "p", "rows": 5}]"#),
            message: #"x.json: line 1: prefetch entry 1 ("p"): unknown key "rows" (expected "name", "when", "ahead", "behind", "variants")"#),
        Bad(label: "an unknown key in when", json: policy(#""prefetch": [{"when": {"metered": true}, "ahead": 5}]"#),
            message: #"prefetch entry 1: unknown key "metered""#),
        Bad(label: "a condition on the cache", json: policy(#""prefetch": [{"when": {"cached": {"original": true}}, "ahead": 5}]"#),
            message: #"prefetch entry 1: "when" tests "cached", which is about one item, but a prefetch plan is for a whole list (it may test "network", "expensive", "constrained", "roaming", "captive", "settings")"#),
        Bad(label: "a condition on the thumbnail", json: policy(#""prefetch": [{"when": {"hasThumbnail": true}, "ahead": 5}]"#),
            message: #"prefetch entry 1: "when" tests "hasThumbnail", which is about one item"#),
        Bad(label: "a condition on the display", json: policy(#""prefetch": [{"when": {"thumbnailCoversDisplay": false}, "ahead": 5}]"#),
            message: #"prefetch entry 1: "when" tests "thumbnailCoversDisplay", which is about one item"#),
        Bad(label: "a negative count", json: policy(#""prefetch": [{"ahead": -3}]"#),
            message: #"prefetch entry 1: "ahead" is -3: a row count cannot be negative"#),
        Bad(label: "a fraction", json: policy(#""prefetch": [{"behind": 1.5}]"#),
            message: #"prefetch entry 1: "behind" must be a whole number of rows, found 1.5"#),
        Bad(label: "an exponent", json: policy(#""prefetch": [{"ahead": 1e3}]"#),
            message: #""ahead" must be a whole number of rows, found 1e3"#),
        Bad(label: "a count as a string", json: policy(#""prefetch": [{"ahead": "5"}]"#),
            message: #""ahead" must be a whole number of rows, found a string"#),
        Bad(label: "an absurd count", json: policy(#""prefetch": [{"ahead": 1001}]"#),
            message: #"prefetch entry 1: "ahead" is 1001 rows, at most 1000 are allowed"#),
        Bad(label: "a count past Int.max", json: policy(#""prefetch": [{"ahead": 99999999999999999999999999}]"#),
            message: #""ahead" is 999999999999999999999999… rows, at most 1000 are allowed"#),
        Bad(label: "unknown variants", json: policy(#""prefetch": [{"ahead": 5, "variants": "originals"}]"#),
            message: #"prefetch entry 1: unknown variants "originals" (expected "decided", "thumbnails")"#),
        Bad(label: "an unknown network kind", json: policy(#""prefetch": [{"when": {"network": "5g"}, "ahead": 5}]"#),
            message: #"prefetch entry 1: unknown network kind "5g""#),
        Bad(label: "an empty network list", json: policy(#""prefetch": [{"when": {"network": []}, "ahead": 5}]"#),
            message: #"prefetch entry 1: "network" lists no network kind, so the entry can never apply"#),
        Bad(label: "an undeclared setting", json: policy(#""prefetch": [{"when": {"settings": {"hd": true}}, "ahead": 5}]"#),
            message: #"prefetch entry 1: reads the setting "hd", which the policy does not declare in "settings""#),
        Bad(label: "two entries with one name",
            json: policy(#""prefetch": [{"name": "a", "when": {"network": "wifi"}, "ahead": 5}, {"name": "a", "ahead": 1}]"#),
            message: #"prefetch entry 2 ("a"): another prefetch entry already has this name"#),
        Bad(label: "an empty name", json: policy(#""prefetch": [{"name": "", "ahead": 5}]"#),
            message: #"prefetch entry 1 (""): the name is empty"#),
        Bad(label: "an entry after a catch-all", json: policy(#""prefetch": [{"ahead": 5}, {"name": "late", "when": {"network": "wifi"}, "ahead": 20}]"#),
            message: #"prefetch entry 2 ("late"): the entry can never apply: earlier entries match every network state it matches"#),
        Bad(label: "a condition that never holds", json: policy(#""prefetch": [{"when": {"roaming": true, "expensive": false}, "ahead": 5}]"#),
            message: #"prefetch entry 1: the condition can never hold, so the entry can never apply"#),
        Bad(label: "an entry on line 3",
            json: "{\(rules),\n \"prefetch\": [\n  {\"ahead\": -1}\n ]}",
            message: #"x.json: line 3: prefetch entry 1: "ahead" is -1"#),
        Bad(label: "an unknown running-loads choice", json: policy(#""runningLoadsOnWorseNetwork": "keep""#),
            message: #"x.json: line 1: unknown running-loads choice "keep" (expected "cancel", "finish")"#),
        Bad(label: "running loads of the wrong type", json: policy(#""runningLoadsOnWorseNetwork": true"#),
            message: #""runningLoadsOnWorseNetwork" must be "cancel", "finish" or an array of entries, found a boolean"#),
        Bad(label: "an unknown key in a running-loads entry", json: policy(#""runningLoadsOnWorseNetwork": [{"then": "finish", "else": "cancel"}]"#),
            message: #"runningLoadsOnWorseNetwork entry 1: unknown key "else" (expected "when", "then")"#),
        Bad(label: "a running-loads entry without then", json: policy(#""runningLoadsOnWorseNetwork": [{"when": {"network": "wifi"}}]"#),
            message: #"runningLoadsOnWorseNetwork entry 1: "then" is missing"#),
        Bad(label: "a running-loads entry on the cache",
            json: policy(#""runningLoadsOnWorseNetwork": [{"when": {"cached": {"thumbnail": true}}, "then": "finish"}]"#),
            message: #"runningLoadsOnWorseNetwork entry 1: "when" tests "cached", which is about one item, but the running-loads choice is for a whole list"#),
        Bad(label: "a running-loads entry that never applies",
            json: policy(#""runningLoadsOnWorseNetwork": [{"then": "finish"}, {"when": {"roaming": true}, "then": "cancel"}]"#),
            message: #"runningLoadsOnWorseNetwork entry 2: the entry can never apply"#),
        Bad(label: "a running-loads entry with an undeclared setting",
            json: policy(#""runningLoadsOnWorseNetwork": [{"when": {"settings": {"x": true}}, "then": "finish"}]"#),
            message: #"runningLoadsOnWorseNetwork entry 1: reads the setting "x""#),
        Bad(label: "a case that expects nothing", json: policy(#""cases": [{"network": "wifi", "expect": {}}]"#),
            message: #"case 1: "expect" must hold "action", "prefetch" or "runningLoads""#),
        Bad(label: "a case with a prefetch word", json: policy(#""cases": [{"network": "wifi", "expect": {"prefetch": "some"}}]"#),
            message: #"case 1: "prefetch" must be "nothing" or an object with "ahead", "behind" and "variants", found "some""#),
        Bad(label: "a case with an unknown prefetch key", json: policy(#""cases": [{"network": "wifi", "expect": {"prefetch": {"rows": 5}}}]"#),
            message: #"case 1: unknown key "rows" (expected "ahead", "behind", "variants")"#),
        Bad(label: "a case with an absurd prefetch", json: policy(#""cases": [{"network": "wifi", "expect": {"prefetch": {"ahead": 5000}}}]"#),
            message: #"case 1: "ahead" is 5000 rows, at most 1000 are allowed"#),
        Bad(label: "a case with unknown prefetch variants",
            json: policy(#""cases": [{"network": "wifi", "expect": {"prefetch": {"ahead": 5, "variants": "all"}}}]"#),
            message: #"case 1: unknown variants "all""#),
        Bad(label: "a case with an unknown running-loads choice", json: policy(#""cases": [{"network": "wifi", "expect": {"runningLoads": "wait"}}]"#),
            message: #"case 1: unknown running-loads choice "wait""#),
        Bad(label: "a prefetch case that describes the cache",
            json: policy(#""cases": [{"network": "wifi", "cached": ["original"], "expect": {"prefetch": "nothing"}}]"#),
            message: #"case 1: describes the item or its cache, which only decisions read, but expects no action"#),
        Bad(label: "a prefetch case with an undeclared setting",
            json: policy(#""cases": [{"network": "wifi", "settings": {"x": true}, "expect": {"runningLoads": "cancel"}}]"#),
            message: #"case 1: sets "x", which the policy does not declare"#),
    ]

    @Test("a bad prefetch section, option or case is refused", arguments: bad)
    func refused(_ bad: Bad) {
        do {
            _ = try ImagePolicy(json: Array(bad.json.utf8), name: "x", source: "x.json")
            Issue.record("accepted: \(bad.json)")
        } catch {
            #expect(error.description.contains(bad.message), "got: \(error.description)")
            #expect(error.code == .invalid)
            #expect(!error.description.contains("\n"))
        }
    }

    struct BadInCode: Sendable, CustomTestStringConvertible {
        var label: String
        var prefetch: [PrefetchRule] = []
        var runningLoads: [RunningLoadsRule] = []
        var cases: [PolicyCase] = []
        var message: String
        var testDescription: String { label }
    }

    static let badInCode: [BadInCode] = [
        BadInCode(label: "a count made negative after init", prefetch: [{
            var rule = PrefetchRule(plan: PrefetchPlan(ahead: 5))
            rule.plan.behind = -2
            return rule
        }()], message: #"<built-in>: prefetch entry 1: "behind" is -2: a row count cannot be negative"#),
        BadInCode(label: "an absurd count", prefetch: [PrefetchRule("far", plan: PrefetchPlan(ahead: 100_000))],
                  message: #"prefetch entry 1 ("far"): "ahead" is 100000 rows, at most 1000 are allowed"#),
        BadInCode(label: "a condition on the cache", prefetch: [PrefetchRule(when: RuleCondition(cached: [.original: false]), plan: PrefetchPlan(ahead: 1))],
                  message: #"prefetch entry 1: "when" tests "cached""#),
        BadInCode(label: "a running-loads condition on the item",
                  runningLoads: [RunningLoadsRule(when: RuleCondition(thumbnailCoversDisplay: true), then: .finish)],
                  message: #"runningLoadsOnWorseNetwork entry 1: "when" tests "thumbnailCoversDisplay""#),
        BadInCode(label: "too many entries",
                  prefetch: (0..<256).map { PrefetchRule(when: RuleCondition(networks: [.wifi], settings: [:]), plan: PrefetchPlan(ahead: $0)) },
                  message: "<built-in>: prefetch: 256 entries, at most 255 are allowed"),
        BadInCode(label: "too many running-loads entries", runningLoads: Array(repeating: RunningLoadsRule(then: .finish), count: 300),
                  message: "runningLoadsOnWorseNetwork: 300 entries, at most 255 are allowed"),
        BadInCode(label: "a case with an absurd plan", cases: [PolicyCase(network: .offline, prefetch: PrefetchPlan(ahead: 2000))],
                  message: #"case 1: expects a prefetch plan that "ahead" is 2000 rows"#),
        BadInCode(label: "a case that expects nothing", cases: [PolicyCase(network: .offline)],
                  message: "case 1: expects nothing: give an action, a prefetch plan or a running-loads choice"),
    ]

    @Test("a bad prefetch section built in code is refused", arguments: badInCode)
    func refusedInCode(_ bad: BadInCode) {
        do {
            _ = try ImagePolicy(name: "x", settings: [], rules: [PolicyRule("end", then: .placeholder, reason: "r")], cases: bad.cases,
                                prefetch: bad.prefetch, runningLoadsOnWorseNetwork: bad.runningLoads)
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains(bad.message), "got: \(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func everyPrefixOfAPolicyWithAPrefetchSectionFailsCleanly() throws {
        let text = #"{"settings": {"s": false}, "rules": [{"name": "b", "action": "placeholder", "reason": "r"}], "prefetch": [{"name": "p", "when": {"network": ["wifi"], "settings": {"s": true}}, "ahead": 20, "behind": 5, "variants": "thumbnails"}], "runningLoadsOnWorseNetwork": [{"when": {"roaming": true}, "then": "cancel"}, {"then": "finish"}], "cases": [{"network": "wifi", "settings": {"s": true}, "expect": {"prefetch": {"ahead": 20, "behind": 5, "variants": "thumbnails"}, "runningLoads": "finish"}}]}"#
        let bytes = Array(text.utf8)
        let policy = try ImagePolicy(json: bytes, name: "x", source: "x.json")
        #expect(policy.failingCases().isEmpty)
        for end in 0..<bytes.count {
            #expect(throws: DataFileError.self) { try ImagePolicy(json: bytes[0..<end], name: "x", source: "x.json") }
        }
    }
}
