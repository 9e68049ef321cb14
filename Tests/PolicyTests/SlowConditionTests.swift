import Foundation
import Policy
import Testing
import TestSupport

/// The "slow" condition: parsed and validated, a bit in the table only of policies that test it,
/// decided from a `LinkEstimate` against the policy's `slowBelow`, listed by the truth table and
/// explained.
struct SlowConditionTests {
    static let catchAll = #"{"name": "end", "action": "load", "variant": "original", "reason": "r"}"#
    static let slowRule = #"{"name": "slow", "when": {"slow": true, "hasThumbnail": true}, "action": "load", "variant": "thumbnail", "reason": "r"}"#
    static let threshold = #""slowBelow": {"bytesPerSecond": 51200}"#

    /// A small policy testing slow: thumbnails on a slow link, else the original.
    static func policy(_ extra: String = "") throws -> ImagePolicy {
        try ImagePolicy(json: Array(#"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold)\#(extra)}"#.utf8), name: "x", source: "x.json")
    }

    static let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!, thumbnail: ImageURL("https://img.example/t.jpg"))

    struct Row: Sendable, CustomTestStringConvertible {
        var network: NetworkKind
        var throughput: Double?
        var slow: Bool
        var testDescription: String { "\(network) at \(throughput.map { "\($0)" } ?? "unmeasured") → slow \(slow)" }
    }

    static let rows: [Row] = [
        Row(network: .wifi, throughput: nil, slow: false),
        Row(network: .wifi, throughput: 0, slow: true),
        Row(network: .wifi, throughput: 30_000, slow: true),
        Row(network: .wifi, throughput: 51_199.99, slow: true),
        Row(network: .wifi, throughput: 51_200, slow: false),
        Row(network: .wifi, throughput: 500_000, slow: false),
        Row(network: .wired, throughput: 1, slow: true),
        Row(network: .cellular, throughput: 1, slow: true),
        Row(network: .unknown, throughput: 1, slow: true),
        Row(network: .offline, throughput: 1, slow: false),
        Row(network: .wifi, throughput: .nan, slow: true),
        Row(network: .wifi, throughput: .infinity, slow: false),
        Row(network: .wifi, throughput: -5, slow: true),
    ]

    @Test("a decision is slow below slowBelow, measured and online only", arguments: rows)
    func decidesFromTheEstimate(_ row: Row) throws {
        let policy = try Self.policy()
        let estimate = row.throughput.map { LinkEstimate(bytesPerSecond: $0) }
        let decision = policy.decide(Self.item, network: NetworkState(row.network), settings: policy.defaultSettings, cached: [],
                                     estimate: estimate)
        #expect(decision.rule == (row.slow ? "slow" : "end"), "\(decision)")
        #expect(policy.isSlow(estimate) == (row.slow || (row.network == .offline && row.throughput != nil)))
        // The fast path agrees with the rules walked one by one.
        let input = policy.input(for: Self.item, network: NetworkState(row.network), settings: policy.defaultSettings, cached: [],
                                 estimate: estimate)
        #expect(input.isSlow == row.slow)
        #expect(policy.explain(input).last?.rule.name == decision.rule)
    }

    @Test func theOtherOverloadsTakeTheEstimate() throws {
        let policy = try Self.policy()
        let slow = LinkEstimate(bytesPerSecond: 100)
        let byCache = policy.decide(Self.item, network: NetworkState(.wifi), settings: policy.defaultSettings,
                                    cache: StaticCacheContents.empty, estimate: slow)
        let byStore = try policy.decide(Self.item, network: NetworkState(.wifi), settings: InMemorySettingsStore(),
                                        cache: StaticCacheContents.empty, estimate: slow)
        #expect(byCache.rule == "slow" && byStore.rule == "slow")
        // Without an estimate (source-compatible calls), the link is not slow.
        #expect(policy.decide(Self.item, network: NetworkState(.wifi), settings: policy.defaultSettings, cache: StaticCacheContents.empty).rule == "end")
    }

    @Test func aPolicyThatDoesNotTestSlowIgnoresTheEstimate() throws {
        let policy = ImagePolicy.default
        #expect(!policy.readsSlow && policy.slowBelow == nil)
        #expect(!policy.truthTable().contains { $0.input.isSlow })
        for kind in NetworkKind.allCases {
            for cached in [CachedVariants(), CachedVariants(.thumbnail), CachedVariants(.original)] {
                let measured = policy.decide(Self.item, network: NetworkState(kind), settings: policy.defaultSettings, cached: cached,
                                             estimate: LinkEstimate(bytesPerSecond: 1))
                let unmeasured = policy.decide(Self.item, network: NetworkState(kind), settings: policy.defaultSettings, cached: cached)
                #expect(measured == unmeasured)
            }
        }
        // A slow input given by hand reads the same entry as a fast one.
        var input = PolicyInput(network: NetworkState(.wifi), cached: [], hasThumbnail: true, settings: policy.defaultSettings)
        let fast = policy.outcome(for: input)
        input.isSlow = true
        #expect(policy.outcome(for: input) == fast)
    }

    @Test func theTruthTableListsSlowInputsApartButNeverOffline() throws {
        let policy = try Self.policy()
        #expect(policy.readsSlow)
        let table = policy.truthTable()
        let slow = table.filter { $0.input.isSlow }
        // Without slow: 5 kinds × 2 expensive × 2 constrained × 6 cache/thumbnail states = 120.
        #expect(table.count - slow.count == 120)
        #expect(slow.count == 96, "4 kinds that can be slow × 2 × 2 × 6")
        #expect(!slow.contains { $0.input.network.kind == .offline })
        for (input, outcome) in table {
            let expected = input.isSlow && input.hasThumbnail ? "slow" : "end"
            #expect(policy.rules[outcome.ruleIndex].name == expected, "\(input)")
        }
        // A slow input made by hand offline is not slow.
        let offline = PolicyInput(network: NetworkState(.offline), cached: [], hasThumbnail: true, settings: policy.defaultSettings,
                                  isSlow: true)
        #expect(!offline.isSlow)
    }

    @Test func explainSaysWhyTheSlowRuleDidOrDidNotMatch() throws {
        let policy = try Self.policy()
        let fast = policy.input(for: Self.item, network: NetworkState(.wifi), settings: policy.defaultSettings, cached: [],
                                estimate: LinkEstimate(bytesPerSecond: 60_000))
        #expect(policy.explain(fast).first?.mismatch == "the link is not slow (or not measured)")
        let slow = policy.input(for: Self.item, network: NetworkState(.wifi), settings: policy.defaultSettings, cached: [],
                                estimate: LinkEstimate(bytesPerSecond: 6_000))
        #expect(policy.explain(slow).first?.matched == true)
        #expect(slow.description.hasSuffix(" slow=yes"))
        #expect(policy.rules[0].condition.summary == "slow and has a thumbnail")
        let notSlow = RuleCondition(slow: false)
        #expect(notSlow.summary == "not slow" && !notSlow.isCatchAll)
        #expect(notSlow.mismatch(for: slow) { _ in false } == "the link is slow")
    }

    @Test func casesGiveAThroughput() throws {
        let passing = try Self.policy(#", "cases": [{"network": "wifi", "throughput": 30000, "expect": {"action": "load", "variant": "thumbnail", "rule": "slow"}}, {"network": "wifi", "throughput": 1e6, "expect": {"action": "load", "variant": "original", "rule": "end"}}, {"network": "wifi", "expect": {"action": "load", "variant": "original", "rule": "end"}}]"#)
        #expect(passing.failingCases().isEmpty, "\(passing.failingCases())")
        #expect(passing.cases[0].estimate == LinkEstimate(bytesPerSecond: 30_000))
        #expect(passing.cases[2].estimate == nil)
        let failing = try Self.policy(#", "cases": [{"network": "wifi", "throughput": 60000, "expect": {"action": "load", "variant": "thumbnail", "rule": "slow"}}]"#)
        #expect(failing.failingCases().map(\.description) == [#"case 1: expected load thumbnail by rule slow, got load original by rule end"#])
    }

    typealias Bad = PolicyValidationTests.Bad

    static let bad: [Bad] = [
        Bad(label: "slow tested without a threshold", json: #"{"rules": [\#(slowRule), \#(catchAll)]}"#,
            message: #"x.json: line 1: rule 1 ("slow"): tests "slow", but the policy gives no threshold: add "slowBelow": {"bytesPerSecond": 51200}"#),
        Bad(label: "a threshold no rule reads", json: #"{"rules": [\#(catchAll)], \#(threshold)}"#,
            message: #"x.json: "slowBelow" is given, but no rule tests "slow""#),
        Bad(label: "slow not a boolean",
            json: #"{"rules": [{"name": "a", "when": {"slow": "yes"}, "action": "placeholder", "reason": "r"}, \#(catchAll)], \#(threshold)}"#,
            message: #"rule 1 ("a"): "slow" must be true or false, found a string"#),
        Bad(label: "threshold zero", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"bytesPerSecond": 0}}"#,
            message: #"slowBelow: "bytesPerSecond" is 0: it must be from 1 to 1000000000000"#),
        Bad(label: "threshold negative", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"bytesPerSecond": -5}}"#,
            message: #"slowBelow: "bytesPerSecond" must be a whole number from 1 to 1000000000000, found -5"#),
        Bad(label: "threshold fractional", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"bytesPerSecond": 1.5}}"#,
            message: #"found 1.5"#),
        Bad(label: "threshold huge",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"bytesPerSecond": 99999999999999999999999999999}}"#,
            message: #""bytesPerSecond" is 999999999999999999999999…: it must be from 1 to 1000000000000"#),
        Bad(label: "threshold a string", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"bytesPerSecond": "fast"}}"#,
            message: #""bytesPerSecond" must be a whole number, found a string"#),
        Bad(label: "threshold without bytesPerSecond", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {}}"#,
            message: #""bytesPerSecond" is missing"#),
        Bad(label: "threshold unknown key", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": {"kbps": 50}}"#,
            message: #"unknown key "kbps""#),
        Bad(label: "threshold not an object", json: #"{"rules": [\#(slowRule), \#(catchAll)], "slowBelow": 51200}"#,
            message: #"slowBelow"#),
        Bad(label: "slow in a prefetch entry",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "prefetch": [{"when": {"slow": true}, "ahead": 5}]}"#,
            message: #"prefetch entry 1: "when" tests "slow", which only decisions read"#),
        Bad(label: "slow in a running-loads entry",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "runningLoadsOnWorseNetwork": [{"when": {"slow": false}, "then": "finish"}]}"#,
            message: #"runningLoadsOnWorseNetwork entry 1: "when" tests "slow", which only decisions read"#),
        Bad(label: "throughput negative",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "cases": [{"network": "wifi", "throughput": -1, "expect": {"action": "load", "variant": "original", "rule": "end"}}]}"#,
            message: #"case 1: "throughput" is -1: it must be from 0 to 1000000000000000 bytes per second"#),
        Bad(label: "throughput absurd",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "cases": [{"network": "wifi", "throughput": 1e400, "expect": {"action": "load", "variant": "original", "rule": "end"}}]}"#,
            message: #""throughput" is 1e400"#),
        Bad(label: "throughput a string",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "cases": [{"network": "wifi", "throughput": "slow", "expect": {"action": "load", "variant": "original", "rule": "end"}}]}"#,
            message: #""throughput" must be a number of bytes per second, found a string"#),
        Bad(label: "throughput in a policy that does not test slow",
            json: #"{"rules": [\#(catchAll)], "cases": [{"network": "wifi", "throughput": 5, "expect": {"action": "load", "variant": "original", "rule": "end"}}]}"#,
            message: #"case 1: gives a "throughput", but no rule tests "slow""#),
        Bad(label: "throughput in a case expecting no decision",
            json: #"{"rules": [\#(slowRule), \#(catchAll)], \#(threshold), "cases": [{"network": "wifi", "throughput": 5, "expect": {"prefetch": "nothing"}}]}"#,
            message: #"case 1: gives a "throughput", which only decisions read, but expects no action"#),
    ]

    /// Checked as every other bad policy: one line naming the file, the rule or case, and what is wrong.
    @Test("a bad use of slow is rejected", arguments: bad)
    func rejected(_ bad: Bad) {
        PolicyValidationTests().rejected(bad)
    }

    @Test func policiesBuiltInCodeAreValidatedToo() {
        let rules = [PolicyRule("slow", when: RuleCondition(hasThumbnail: true, slow: true), then: .load(.thumbnail), reason: "r"),
                     PolicyRule("end", when: .always, then: .load(.original), reason: "r")]
        #expect(throws: DataFileError.self) { try ImagePolicy(name: "x", settings: [], rules: rules) }
        #expect(throws: DataFileError.self) {
            try ImagePolicy(name: "x", settings: [], rules: rules, slowBelow: SlowLinkThreshold(bytesPerSecond: 0))
        }
        #expect(throws: DataFileError.self) {
            try ImagePolicy(name: "x", settings: [], rules: rules,
                            prefetch: [PrefetchRule(when: RuleCondition(slow: true), plan: PrefetchPlan(ahead: 1))],
                            slowBelow: .pinRemoteImageLowQuality)
        }
        #expect((try? ImagePolicy(name: "x", settings: [], rules: rules, slowBelow: .pinRemoteImageLowQuality)) != nil)
    }

    @Test func linkEstimatesNeverHoldGarbage() {
        #expect(LinkEstimate(bytesPerSecond: .nan).bytesPerSecond == 0)
        #expect(LinkEstimate(bytesPerSecond: -1).bytesPerSecond == 0)
        #expect(LinkEstimate(bytesPerSecond: .infinity).bytesPerSecond == .greatestFiniteMagnitude)
        #expect(LinkEstimate(bytesPerSecond: 1, latency: .seconds(-3), sampleCount: -2) == LinkEstimate(bytesPerSecond: 1, latency: .zero, sampleCount: 1))
        #expect(LinkEstimate(bytesPerSecond: 30_000.4, latency: .milliseconds(400), sampleCount: 3).description
                == "30000 B/s, latency 0.4 seconds, 3 transfers")
        _ = LinkEstimate(bytesPerSecond: .greatestFiniteMagnitude).description
    }

    @Test func lowDataGivesThumbnailsOnASlowFreeLinkOnly() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/low-data.json")
        #expect(policy.slowBelow == .pinRemoteImageLowQuality)
        for (input, outcome) in policy.truthTable() where input.isSlow {
            #expect(outcome.action != .load(.original) || !input.hasThumbnail, "low-data loads an original on a slow link: \(input)")
            var fast = input
            fast.isSlow = false
            if ![.wifi, .wired].contains(input.network.kind) || input.network.isExpensive || input.network.isConstrained {
                #expect(policy.outcome(for: fast).action == outcome.action, "slow changes nothing off a free link: \(input)")
            }
        }
    }

    @Test func slowWifiThumbnailsIsTheArticleTreeUntilTheLinkIsSlow() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/slow-wifi-thumbnails.json")
        let tree = ImagePolicy.default
        for (input, outcome) in policy.truthTable() {
            let actionOfTree = tree.outcome(for: input).action
            if !input.isSlow || ![.wifi, .wired].contains(input.network.kind) || input.settings.isOn(at: 0) || !input.hasThumbnail {
                #expect(outcome.action == actionOfTree, "\(input)")
            } else if !input.cached.has(.original) {
                #expect(outcome.action == (input.cached.has(.thumbnail) ? .showCached(.thumbnail) : .load(.thumbnail)), "\(input)")
            }
        }
        #expect(policy.prefetch.map(\.plan) == tree.prefetch.map(\.plan) && policy.prefetch.map(\.condition) == tree.prefetch.map(\.condition))
    }
}
