import Policy
import Testing

/// The policy file's `revalidateStale` option: validated, read per network state, checked by cases.
struct StaleRevalidationTests {
    static let rules = #""rules": [{"name": "all", "action": "load", "variant": "original", "reason": "r"}]"#

    static func policy(_ extra: String) throws(DataFileError) -> ImagePolicy {
        try ImagePolicy(json: Array("{\(rules)\(extra)}".utf8), name: "r", source: "r.json")
    }

    @Test("which links each choice revalidates on", arguments: [
        (StaleRevalidation.freeLink, NetworkState(.wifi), true),
        (.freeLink, NetworkState(.wired), true),
        (.freeLink, NetworkState(.unknown), true),
        (.freeLink, NetworkState(.cellular, isExpensive: true), false),
        (.freeLink, NetworkState(.wifi, isConstrained: true), false),
        (.freeLink, NetworkState(.cellular, isRoaming: true), false),
        (.freeLink, NetworkState(.offline), false),
        (.freeLink, NetworkState(.cellular), false),                    // cellular is never free, metered or not
        (.freeLink, NetworkState(.wifi, isCaptive: true), false),       // a captive link reaches no server
        (.freeLink, NetworkState(.unknown, isCaptive: true), false),
        (.anyLink, NetworkState(.cellular), true),
        (.anyLink, NetworkState(.wifi, isCaptive: true), false),
        (.anyLink, NetworkState(.cellular, isRoaming: true), true),
        (.anyLink, NetworkState(.wifi, isConstrained: true), true),
        (.anyLink, NetworkState(.offline), false),
        (.never, NetworkState(.wifi), false),
    ])
    func choices(choice: StaleRevalidation, network: NetworkState, revalidates: Bool) {
        #expect(choice.allows(on: network) == revalidates)
    }

    @Test func theOptionIsReadAndItsAbsenceIsTheDefault() throws {
        #expect(try Self.policy(#", "revalidateStale": "any-link""#).staleRevalidation == .anyLink)
        #expect(try Self.policy(#", "revalidateStale": "never""#).revalidatesStale(on: NetworkState(.wifi)) == false)
        let unsaid = try Self.policy("")
        #expect(unsaid.staleRevalidation == nil)
        #expect(unsaid.revalidatesStale(on: NetworkState(.wifi)) && !unsaid.revalidatesStale(on: NetworkState(.cellular, isExpensive: true)))
    }

    @Test("a bad value is refused, naming the key and the choices", arguments: [
        (#", "revalidateStale": "sometimes""#, #""revalidateStale" must be "free-link", "any-link", "never", found "sometimes""#),
        (#", "revalidateStale": true"#, "revalidateStale"),
    ])
    func badValues(extra: String, message: String) {
        #expect {
            _ = try Self.policy(extra)
        } throws: { error in
            guard let error = error as? DataFileError else { return false }
            return error.code == .invalid && error.description.contains(message) && error.description.contains("r.json")
        }
    }

    @Test func casesCheckTheRevalidation() throws {
        let passing = try Self.policy(#", "revalidateStale": "free-link", "cases": [{"network": "cellular", "expensive": true, "expect": {"revalidatesStale": false}}]"#)
        #expect(passing.failingCases().isEmpty)
        let failing = try Self.policy(#", "revalidateStale": "never", "cases": [{"name": "w", "network": "wifi", "expect": {"revalidatesStale": true}}]"#)
        let failure = try #require(failing.failingCases().first)
        #expect(failure.staleRevalidationFails)
        #expect(failure.description == "case 1 (w): expected stale images revalidated, got not revalidated")
    }
}
