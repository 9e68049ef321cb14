import Foundation
import Policy
import Testing
import TestSupport

/// Every file in `policies/` loads, validates, and passes its own table of cases.
struct PolicyFileTests {
    static let files: [String] = {
        ((try? FileManager.default.contentsOfDirectory(atPath: PackagePaths.policies)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
    }()

    @Test func theRequiredPoliciesShip() {
        for name in ["default.json", "low-data.json", "wifi-only.json", "always-original.json"] {
            #expect(Self.files.contains(name), "policies/\(name) is missing")
        }
    }

    @Test("policy file passes its cases", arguments: files)
    func policyFile(_ name: String) throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/" + name)
        #expect(policy.name == String(name.dropLast(5)))
        #expect(!policy.cases.isEmpty, "a policy file must carry its own cases")
        #expect(!policy.summary.isEmpty)
        let failures = policy.failingCases()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func wifiOnlyNeverDownloadsOffWifi() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/wifi-only.json")
        for (input, outcome) in policy.truthTable() where ![.wifi, .wired].contains(input.network.kind) {
            if case .load = outcome.action { Issue.record("wifi-only loads on \(input)") }
        }
    }

    @Test func lowDataOnlyLoadsOriginalsOnAFreeLink() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/low-data.json")
        for (input, outcome) in policy.truthTable() where outcome.action == .load(.original) {
            #expect([.wifi, .wired].contains(input.network.kind) && !input.network.isExpensive && !input.network.isConstrained,
                    "low-data loads an original on \(input)")
        }
        for (input, outcome) in policy.truthTable() where !input.hasThumbnail && !input.cached.has(.original) {
            if input.network.isExpensive || input.network.isConstrained {
                #expect(outcome.action == .placeholder, "missing thumbnail on a saving network must be the placeholder: \(input)")
            }
        }
    }

    @Test func lowDataLoadsNothingNewWhenRoaming() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/low-data.json")
        let roaming = policy.truthTable().filter { $0.input.network.isRoaming }
        #expect(roaming.filter { !$0.input.isSlow }.count == 60, "the table lists roaming inputs apart: 5 kinds × constrained × 6 cache states")
        for (input, outcome) in roaming {
            if case .load = outcome.action { Issue.record("low-data loads while roaming: \(input)") }
        }
        // The fast path too, from a state as a provider gives it (roaming sets expensive).
        let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!, thumbnail: ImageURL("https://img.example/t.jpg"))
        let decision = policy.decide(item, network: NetworkState(.cellular, isRoaming: true), settings: policy.defaultSettings,
                                     cached: [])
        #expect(decision.action == .placeholder && decision.rule == "roaming-placeholder", "\(decision)")
    }

    @Test("captive is offline to every shipped policy", arguments: files)
    func captiveIsOffline(_ name: String) throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/" + name)
        #expect(!policy.readsCaptive)
        for (input, outcome) in policy.truthTable() where input.network.kind != .offline {
            var captive = input
            captive.network.isCaptive = true
            #expect(policy.outcome(for: captive) == policy.outcome(for: PolicyInput(
                network: NetworkState(.offline, isExpensive: input.network.isExpensive, isConstrained: input.network.isConstrained,
                                      isRoaming: input.network.isRoaming),
                cached: input.cached, hasThumbnail: input.hasThumbnail, settings: input.settings,
                anyRungCached: input.anyRungCached, coveringRungCached: input.coveringRungCached)), "\(name): \(captive) -> \(outcome)")
        }
    }

    @Test func alwaysOriginalLoadsTheOriginalOnEveryLink() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/always-original.json")
        for (input, outcome) in policy.truthTable() where input.network.kind != .offline && !input.cached.has(.original) {
            #expect(outcome.action == .load(.original), "\(input)")
        }
    }

    @Test func aFailingCaseIsReported() throws {
        let json = """
            {"rules": [{"name": "all", "action": "placeholder", "reason": "r"}],
             "cases": [{"network": "wifi", "expect": {"action": "load", "variant": "original"}}]}
            """
        let policy = try ImagePolicy(json: Array(json.utf8), name: "x", source: "x.json")
        let failures = policy.failingCases()
        #expect(failures.count == 1)
        #expect(failures.first?.description == "case 1: expected load original, got placeholder by rule all")
    }
}
