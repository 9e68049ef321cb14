extension ImagePolicy {
    /// A case whose decision differs from what it expects.
    public struct CaseFailure: Sendable, Hashable, CustomStringConvertible {
        /// The case.
        public var policyCase: PolicyCase
        /// Its 1-based position in `cases`.
        public var position: Int
        /// What the policy decided.
        public var actualAction: RuleAction
        /// The rule that fired.
        public var actualRule: String

        /// `case 3 (name): expected load thumbnail by rule x, got load original by rule y`.
        public var description: String {
            var label = "case \(position)"
            if let name = policyCase.name { label += " (\(name))" }
            var expected = "\(policyCase.expectedAction)"
            if let rule = policyCase.expectedRule { expected += " by rule \(rule)" }
            return "\(label): expected \(expected), got \(actualAction) by rule \(actualRule)"
        }
    }

    /// The input a case describes, with undeclared settings ignored (validation rejects them).
    public func input(for policyCase: PolicyCase) -> PolicyInput {
        PolicyInput(network: policyCase.network, cached: policyCase.cached, hasThumbnail: policyCase.hasThumbnail,
                    settings: resolveSettings(policyCase.settings).settings,
                    thumbnailCoversDisplay: policyCase.thumbnailCoversDisplay)
    }

    /// Runs the policy's own cases; an empty result means every case holds.
    public func failingCases() -> [CaseFailure] {
        var failures: [CaseFailure] = []
        for (position, policyCase) in cases.enumerated() {
            let outcome = outcome(for: input(for: policyCase))
            let rule = rules[outcome.ruleIndex].name
            if outcome.action != policyCase.expectedAction || (policyCase.expectedRule.map { $0 != rule } ?? false) {
                failures.append(CaseFailure(policyCase: policyCase, position: position + 1, actualAction: outcome.action, actualRule: rule))
            }
        }
        return failures
    }
}
