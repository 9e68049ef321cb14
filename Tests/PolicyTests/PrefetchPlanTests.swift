import Foundation
import Policy
import Testing
import TestSupport

/// What the policies' `prefetch` sections and running-loads options say per network state, how
/// their cases are checked, and the guarantee that a plan never prefetches a variant the policy
/// would not load for a visible row in the same state.
struct PrefetchPlanTests {
    static let defaultFile: ImagePolicy = {
        do { return try ImagePolicy.load(contentsOf: PackagePaths.policies + "/default.json") } catch { fatalError("\(error)") }
    }()

    static func bundled(_ name: String) throws -> ImagePolicy {
        try ImagePolicy.load(contentsOf: PackagePaths.policies + "/\(name).json")
    }

    // MARK: Parsing

    @Test func aSectionIsReadInOrderWithItsDefaults() throws {
        let policy = try ImagePolicy(json: Array(#"""
            {"settings": {"hd": false},
             "rules": [{"name": "end", "action": "placeholder", "reason": "r"}],
             "prefetch": [
               {"name": "free", "when": {"network": ["wifi", "wired"], "expensive": false, "settings": {"hd": true}},
                "ahead": 20, "behind": 5, "variants": "decided"},
               {"when": {"network": "cellular", "roaming": false, "captive": false}, "ahead": 5, "variants": "thumbnails"},
               {"name": "stop"}
             ],
             "runningLoadsOnWorseNetwork": "finish"}
            """#.utf8), name: "x", source: "x.json")
        #expect(policy.prefetch.count == 3)
        #expect(policy.prefetch[0].name == "free")
        #expect(policy.prefetch[0].condition == RuleCondition(networks: [.wifi, .wired], expensive: false, settings: ["hd": true]))
        #expect(policy.prefetch[0].plan == PrefetchPlan(ahead: 20, behind: 5, variants: .decided))
        #expect(policy.prefetch[0].line == 4)
        #expect(policy.prefetch[1].name == nil)
        #expect(policy.prefetch[1].condition == RuleCondition(networks: [.cellular], roaming: false, captive: false))
        #expect(policy.prefetch[1].plan == PrefetchPlan(ahead: 5, behind: 0, variants: .thumbnails))
        #expect(policy.prefetch[2].plan == .nothing)
        #expect(policy.prefetch[2].condition.isCatchAll)
        #expect(policy.runningLoadsOnWorseNetwork == [RunningLoadsRule(then: .finish, line: 9)])
    }

    @Test func noSectionPrefetchesNothingAndCancels() throws {
        let policy = try ImagePolicy(json: Array(#"{"rules": [{"name": "end", "action": "load", "variant": "original", "reason": "r"}]}"#.utf8),
                                     name: "x", source: "x.json")
        #expect(policy.prefetch.isEmpty && policy.runningLoadsOnWorseNetwork.isEmpty)
        for row in policy.networkStatePlans() {
            #expect(row.prefetch == .nothing && row.prefetchEntry == nil, "\(row.network)")
            #expect(row.runningLoads == .cancel && row.runningLoadsEntry == nil)
            #expect(!policy.letsRunningLoadsFinish(on: row.network, settings: row.settings))
        }
    }

    // MARK: Lookup per state

    struct Lookup: Sendable, CustomTestStringConvertible {
        var network: NetworkState
        var alwaysOriginal = false
        var plan: PrefetchPlan
        var testDescription: String { "\(network)\(alwaysOriginal ? " alwaysDownloadOriginalImage" : "") → \(plan)" }
    }

    static let decided20 = PrefetchPlan(ahead: 20, behind: 5, variants: .decided)
    static let thumbnails5 = PrefetchPlan(ahead: 5, behind: 0, variants: .thumbnails)

    static let defaultLookups: [Lookup] = [
        Lookup(network: NetworkState(.wifi), plan: decided20),
        Lookup(network: NetworkState(.wired), plan: decided20),
        Lookup(network: NetworkState(.wifi), alwaysOriginal: true, plan: decided20),
        Lookup(network: NetworkState(.wifi, isExpensive: true), plan: .nothing),
        Lookup(network: NetworkState(.wired, isExpensive: true), plan: .nothing),
        Lookup(network: NetworkState(.wifi, isConstrained: true), plan: .nothing),
        Lookup(network: NetworkState(.wifi, isRoaming: true), plan: .nothing),
        Lookup(network: NetworkState(.wifi, isCaptive: true), plan: .nothing),
        Lookup(network: NetworkState(.wired, isCaptive: true), plan: .nothing),
        Lookup(network: NetworkState(.cellular, isExpensive: true), plan: thumbnails5),
        Lookup(network: NetworkState(.cellular), plan: thumbnails5),
        Lookup(network: NetworkState(.cellular, isExpensive: true), alwaysOriginal: true, plan: thumbnails5),
        Lookup(network: NetworkState(.unknown), plan: thumbnails5),
        Lookup(network: NetworkState(.cellular, isExpensive: true, isConstrained: true), plan: .nothing),
        Lookup(network: NetworkState(.cellular, isRoaming: true), plan: .nothing),
        Lookup(network: NetworkState(.unknown, isRoaming: true), plan: .nothing),
        Lookup(network: NetworkState(.cellular, isExpensive: true, isCaptive: true), plan: .nothing),
        Lookup(network: NetworkState(.offline), plan: .nothing),
        Lookup(network: NetworkState(.offline, isCaptive: true), plan: .nothing),
    ]

    @Test("the default policy's plan per state, built in and from its file", arguments: defaultLookups)
    func defaultPlan(_ lookup: Lookup) {
        for policy in [ImagePolicy.default, Self.defaultFile] {
            let settings = policy.resolveSettings([ImagePolicy.alwaysDownloadOriginalImage: lookup.alwaysOriginal]).settings
            #expect(policy.prefetchPlan(for: lookup.network, settings: settings) == lookup.plan)
            #expect(policy.runningLoads(on: lookup.network, settings: settings) == .cancel)
            #expect(!policy.letsRunningLoadsFinish(on: lookup.network, settings: settings))
        }
    }

    /// A policy whose entries read a setting and captive, with a per-state running-loads option.
    static let stateful: ImagePolicy = {
        let json = #"""
            {"settings": {"prefetchMore": false},
             "rules": [{"name": "end", "action": "load", "variant": "original", "reason": "r"}],
             "prefetch": [
               {"name": "portal", "when": {"captive": true}},
               {"name": "more", "when": {"network": "wifi", "settings": {"prefetchMore": true}}, "ahead": 50, "behind": 10},
               {"name": "wifi", "when": {"network": "wifi"}, "ahead": 10},
               {"name": "rest", "when": {"expensive": true, "roaming": false}, "ahead": 2, "variants": "thumbnails"}
             ],
             "runningLoadsOnWorseNetwork": [
               {"when": {"roaming": true}, "then": "cancel"},
               {"when": {"network": ["cellular", "unknown"], "constrained": false}, "then": "finish"}
             ]}
            """#
        do { return try ImagePolicy(json: Array(json.utf8), name: "stateful", source: "stateful.json") } catch { fatalError("\(error)") }
    }()

    struct StatefulLookup: Sendable, CustomTestStringConvertible {
        var network: NetworkState
        var more: Bool
        var plan: PrefetchPlan
        var entry: String?
        var runningLoads: RunningLoads
        var testDescription: String { "\(network) more=\(more) → \(plan), \(runningLoads)" }
    }

    static let statefulLookups: [StatefulLookup] = [
        StatefulLookup(network: NetworkState(.wifi), more: false, plan: PrefetchPlan(ahead: 10), entry: "wifi", runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.wifi), more: true, plan: PrefetchPlan(ahead: 50, behind: 10), entry: "more", runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.wifi, isCaptive: true), more: true, plan: .nothing, entry: "portal", runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.wired), more: true, plan: .nothing, entry: nil, runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.cellular, isExpensive: true), more: false,
                       plan: PrefetchPlan(ahead: 2, variants: .thumbnails), entry: "rest", runningLoads: .finish),
        StatefulLookup(network: NetworkState(.unknown), more: false, plan: .nothing, entry: nil, runningLoads: .finish),
        StatefulLookup(network: NetworkState(.cellular, isExpensive: true, isConstrained: true), more: false,
                       plan: PrefetchPlan(ahead: 2, variants: .thumbnails), entry: "rest", runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.cellular, isRoaming: true), more: false, plan: .nothing, entry: nil, runningLoads: .cancel),
        StatefulLookup(network: NetworkState(.wired, isExpensive: true), more: true,
                       plan: PrefetchPlan(ahead: 2, variants: .thumbnails), entry: "rest", runningLoads: .cancel),
        StatefulLookup(network: .offline, more: true, plan: .nothing, entry: nil, runningLoads: .cancel),
    ]

    @Test("entries read settings, roaming and captive; the option is per state", arguments: statefulLookups)
    func statefulPlan(_ lookup: StatefulLookup) {
        let policy = Self.stateful
        let settings = policy.resolveSettings(["prefetchMore": lookup.more]).settings
        #expect(policy.prefetchPlan(for: lookup.network, settings: settings) == lookup.plan)
        #expect(policy.runningLoads(on: lookup.network, settings: settings) == lookup.runningLoads)
        #expect(policy.letsRunningLoadsFinish(on: lookup.network, settings: settings) == (lookup.runningLoads == .finish))
        let row = policy.networkStatePlans().first { $0.network == lookup.network && $0.settings == settings }
        #expect(row.map { $0.prefetchEntry.flatMap { policy.prefetch[$0].name } } == lookup.entry)
    }

    @Test func theStateTableListsRoamingAndCaptiveOnlyWhenAnEntryTestsThem() throws {
        #expect(ImagePolicy.default.networkStatePlans().count == 2 * 5 * 3 * 2)   // settings × kinds × (expensive, roaming) × constrained
        #expect(!ImagePolicy.default.networkStatePlans().contains { $0.network.isCaptive })
        #expect(Self.stateful.networkStatePlans().count == 2 * 5 * 3 * 2 * 2)    // … × captive
        let plain = try ImagePolicy(name: "plain", settings: [], rules: [PolicyRule("end", then: .placeholder, reason: "r")],
                                    prefetch: [PrefetchRule(when: RuleCondition(networks: [.wifi]), plan: PrefetchPlan(ahead: 1))])
        #expect(!plain.prefetchReadsRoaming && !plain.prefetchReadsCaptive)
        #expect(plain.networkStatePlans().count == 5 * 2 * 2)
    }

    @Test func theTableAgreesWithWalkingTheEntriesForEveryState() {
        // The compiled lookup against a direct walk of the entries (the slow path), for every state.
        let policy = Self.stateful
        for row in policy.networkStatePlans() {
            let input = PolicyInput(network: row.network, cached: [], hasThumbnail: true, settings: row.settings)
            let walked = policy.prefetch.firstIndex { entry in
                entry.condition.mismatch(for: input) { key in policy.settingPosition(key).map { row.settings.isOn(at: $0) } ?? false } == nil
            }
            #expect(row.prefetchEntry == walked, "\(row.network)")
            #expect(row.prefetch == walked.map { policy.prefetch[$0].plan } ?? .nothing)
        }
    }

    // MARK: The guarantee

    @Test func aPlanPrefetchesOnlyWhatTheDecisionLoads() {
        let cases: [(PrefetchPlan, RuleAction, Variant?)] = [
            (PrefetchPlan(ahead: 5), .load(.original), .original),
            (PrefetchPlan(ahead: 5), .load(.thumbnail), .thumbnail),
            (PrefetchPlan(ahead: 5), .showCached(.original), nil),
            (PrefetchPlan(ahead: 5), .placeholder, nil),
            (PrefetchPlan(ahead: 5, variants: .thumbnails), .load(.thumbnail), .thumbnail),
            (PrefetchPlan(ahead: 5, variants: .thumbnails), .load(.original), nil),
            (PrefetchPlan(ahead: 0, behind: 3, variants: .thumbnails), .load(.thumbnail), .thumbnail),
            (.nothing, .load(.original), nil),
        ]
        for (plan, action, expected) in cases {
            #expect(plan.prefetchedVariant(for: action) == expected, "\(plan) \(action)")
        }
        let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!, thumbnail: ImageURL("https://img.example/t.jpg"))
        let thumbnail = Decision(action: .load(.thumbnail, item.thumbnail!), rule: "r", reason: "r", network: NetworkState(.cellular))
        #expect(PrefetchPlan(ahead: 5, variants: .thumbnails).prefetch(for: thumbnail).map { "\($0.variant) \($0.url)" }
                == "thumbnail https://img.example/t.jpg")
        let original = Decision(action: .load(.original, item.original), rule: "r", reason: "r", network: NetworkState(.cellular))
        #expect(PrefetchPlan(ahead: 5, variants: .thumbnails).prefetch(for: original) == nil)
        #expect(PrefetchPlan(ahead: 5).prefetch(for: original)?.variant == .original)
    }

    static let files = PolicyFileTests.files

    @Test("a bundled policy never prefetches what a visible row in the same state would not load", arguments: files)
    func neverMoreThanAVisibleRow(_ name: String) throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/" + name)
        let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!, thumbnail: ImageURL("https://img.example/t.jpg"),
                             originalWidth: 2000, thumbnailWidth: 400)
        let bare = ImageItem(id: "y", original: ImageURL("https://img.example/p.jpg")!)
        for row in policy.networkStatePlans() {
            for candidate in [item, bare] {
                for raw in UInt8(0)...3 {
                    for width in [nil, 300, 1200] {
                        let cached = CachedVariants(rawValue: raw)
                        let decision = policy.decide(candidate, network: row.network, settings: row.settings, cached: cached, displayWidth: width)
                        guard let prefetched = row.prefetch.prefetch(for: decision) else { continue }
                        #expect(decision.action == .load(prefetched.variant, prefetched.url), "\(name) \(row.network): \(decision)")
                        if row.prefetch.variants == .thumbnails { #expect(prefetched.variant == .thumbnail) }
                    }
                }
            }
        }
    }

    @Test("a bundled policy prefetches nothing offline, behind a portal, when roaming or constrained", arguments: files)
    func nothingOnAPoorNetwork(_ name: String) throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/" + name)
        for row in policy.networkStatePlans() {
            let poor = row.network.kind == .offline || row.network.isCaptive || row.network.isRoaming || row.network.isConstrained
            if poor { #expect(row.prefetch.isEmpty, "\(name): \(row.network) → \(row.prefetch)") }
        }
        for state in [NetworkState(.wifi, isCaptive: true), NetworkState(.cellular, isCaptive: true), .offline] {
            #expect(policy.prefetchPlan(for: state, settings: policy.defaultSettings).isEmpty, "\(name): \(state)")
        }
    }

    @Test func theBundledPlansFitTheirPurpose() throws {
        let lowData = try Self.bundled("low-data")
        for row in lowData.networkStatePlans() where !row.prefetch.isEmpty {
            #expect([.wifi, .wired].contains(row.network.kind) && !row.network.isExpensive && !row.network.isConstrained, "\(row.network)")
            #expect(row.prefetch.ahead <= 5 && row.prefetch.behind == 0)
        }
        let wifiOnly = try Self.bundled("wifi-only")
        for row in wifiOnly.networkStatePlans() where !row.prefetch.isEmpty {
            #expect([.wifi, .wired].contains(row.network.kind), "\(row.network)")
        }
        #expect(wifiOnly.prefetchPlan(for: NetworkState(.wifi), settings: wifiOnly.defaultSettings) == Self.decided20)
        let alwaysOriginal = try Self.bundled("always-original")
        #expect(alwaysOriginal.prefetchPlan(for: NetworkState(.cellular, isExpensive: true), settings: alwaysOriginal.defaultSettings)
                == PrefetchPlan(ahead: 5, variants: .decided))
        #expect(alwaysOriginal.letsRunningLoadsFinish(on: NetworkState(.cellular, isExpensive: true), settings: alwaysOriginal.defaultSettings))
        #expect(!alwaysOriginal.letsRunningLoadsFinish(on: NetworkState(.cellular, isRoaming: true), settings: alwaysOriginal.defaultSettings))
        let enough = try Self.bundled("thumbnail-when-enough")
        #expect(enough.networkStatePlans().map(\.prefetch) == ImagePolicy.default.networkStatePlans().map(\.prefetch))
        for name in ["default", "low-data", "wifi-only", "thumbnail-when-enough"] {
            let policy = try Self.bundled(name)
            #expect(policy.networkStatePlans().allSatisfy { $0.runningLoads == .cancel }, "\(name) cancels running loads")
        }
    }

    // MARK: Cases

    static func policy(cases: String) throws -> ImagePolicy {
        try ImagePolicy(json: Array(#"""
            {"rules": [{"name": "wifi", "when": {"network": "wifi"}, "action": "load", "variant": "original", "reason": "r"},
                       {"name": "end", "action": "placeholder", "reason": "r"}],
             "prefetch": [{"name": "wifi", "when": {"network": "wifi"}, "ahead": 20, "behind": 5}],
             "runningLoadsOnWorseNetwork": [{"when": {"network": "cellular"}, "then": "finish"}],
             "cases": [\#(cases)]}
            """#.utf8), name: "x", source: "x.json")
    }

    struct CaseScenario: Sendable, CustomTestStringConvertible {
        var label: String
        var json: String
        /// The failure's description, or nil when the case holds.
        var failure: String?
        var testDescription: String { label }
    }

    static let caseScenarios: [CaseScenario] = [
        CaseScenario(label: "a right plan holds", json: #"{"network": "wifi", "expect": {"prefetch": {"ahead": 20, "behind": 5, "variants": "decided"}}}"#),
        CaseScenario(label: "nothing holds where nothing is prefetched", json: #"{"network": "cellular", "expect": {"prefetch": "nothing"}}"#),
        CaseScenario(label: "an empty plan with other variants is nothing",
                     json: #"{"network": "offline", "expect": {"prefetch": {"ahead": 0, "variants": "thumbnails"}}}"#),
        CaseScenario(label: "a right running-loads choice holds", json: #"{"network": "cellular", "expect": {"runningLoads": "finish"}}"#),
        CaseScenario(label: "all three right", json: #"{"network": "wifi", "expect": {"action": "load", "variant": "original", "rule": "wifi", "prefetch": {"ahead": 20, "behind": 5}, "runningLoads": "cancel"}}"#),
        CaseScenario(label: "a wrong plan is reported",
                     json: #"{"name": "cell", "network": "cellular", "expect": {"prefetch": {"ahead": 5, "behind": 0, "variants": "thumbnails"}}}"#,
                     failure: "case 1 (cell): expected prefetch ahead 5, behind 0, thumbnails, got nothing"),
        CaseScenario(label: "a wrong count is reported", json: #"{"network": "wifi", "expect": {"prefetch": {"ahead": 20}}}"#,
                     failure: "case 1: expected prefetch ahead 20, behind 0, decided, got ahead 20, behind 5, decided"),
        CaseScenario(label: "a wrong nothing is reported", json: #"{"network": "wifi", "expect": {"prefetch": "nothing"}}"#,
                     failure: "case 1: expected prefetch nothing, got ahead 20, behind 5, decided"),
        CaseScenario(label: "a wrong running-loads choice is reported", json: #"{"network": "wifi", "expect": {"runningLoads": "finish"}}"#,
                     failure: "case 1: expected running loads finish, got cancel"),
        CaseScenario(label: "only the failing parts are reported",
                     json: #"{"network": "cellular", "expect": {"action": "placeholder", "prefetch": {"ahead": 1}, "runningLoads": "cancel"}}"#,
                     failure: "case 1: expected prefetch ahead 1, behind 0, decided, got nothing; expected running loads cancel, got finish"),
        CaseScenario(label: "a wrong decision and plan together",
                     json: #"{"network": "offline", "expect": {"action": "load", "variant": "original", "prefetch": {"ahead": 1}}}"#,
                     failure: "case 1: expected load original, got placeholder by rule end; expected prefetch ahead 1, behind 0, decided, got nothing"),
    ]

    @Test("prefetch and running-loads cases are checked", arguments: caseScenarios)
    func caseChecked(_ scenario: CaseScenario) throws {
        let failures = try Self.policy(cases: scenario.json).failingCases()
        #expect(failures.map(\.description) == (scenario.failure.map { [$0] } ?? []))
    }

    @Test func aCaseWithoutAnActionDoesNotCheckTheDecision() throws {
        let policy = try Self.policy(cases: #"{"network": "offline", "expect": {"runningLoads": "cancel"}}"#)
        #expect(policy.cases[0].expectedAction == nil && !policy.cases[0].checksDecision)
        #expect(policy.failingCases().isEmpty)
    }

    @Test func aPrefetchCaseCanBeWrittenInCode() throws {
        let policy = try ImagePolicy(name: "x", settings: [], rules: [PolicyRule("end", then: .placeholder, reason: "r")],
                                     cases: [PolicyCase(network: NetworkState(.wifi), prefetch: PrefetchPlan(ahead: 3)),
                                             PolicyCase(network: NetworkState(.cellular), runningLoads: .finish)],
                                     prefetch: [PrefetchRule(when: RuleCondition(networks: [.wifi]), plan: PrefetchPlan(ahead: 3))],
                                     runningLoadsOnWorseNetwork: [RunningLoadsRule(then: .cancel)])
        let failures = policy.failingCases()
        #expect(failures.map(\.position) == [2])
        #expect(failures.first?.runningLoadsFail == true && failures.first?.prefetchFails == false && failures.first?.decisionFails == false)
    }
}
