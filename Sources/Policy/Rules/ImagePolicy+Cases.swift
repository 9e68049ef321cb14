extension ImagePolicy {
    /// A case whose decision, prefetch plan or running-loads choice differs from what it expects.
    public struct CaseFailure: Sendable, Hashable, CustomStringConvertible {
        /// The case.
        public var policyCase: PolicyCase
        /// Its 1-based position in `cases`.
        public var position: Int
        /// What the policy decided.
        public var actualAction: RuleAction
        /// The rule that fired.
        public var actualRule: String
        /// What the policy prefetches in the case's network state.
        public var actualPrefetch: PrefetchPlan
        /// What the policy does with running loads when the network gets worse to the case's state.
        public var actualRunningLoads: RunningLoads
        /// Whether the policy revalidates stale cached images in the case's network state.
        public var actualStaleRevalidation = StaleRevalidation.default.allows(on: NetworkState(.wifi))

        /// Creates a failure.
        public init(policyCase: PolicyCase, position: Int, actualAction: RuleAction, actualRule: String,
                    actualPrefetch: PrefetchPlan = .nothing, actualRunningLoads: RunningLoads = .cancel) {
            self.policyCase = policyCase
            self.position = position
            self.actualAction = actualAction
            self.actualRule = actualRule
            self.actualPrefetch = actualPrefetch
            self.actualRunningLoads = actualRunningLoads
        }

        /// Whether the decision differs from the expected one.
        public var decisionFails: Bool {
            if policyCase.ladder != nil { return ladderDecisionFails }
            return (policyCase.expectedAction.map { $0 != actualAction } ?? false) || (policyCase.expectedRule.map { $0 != actualRule } ?? false)
        }

        /// Whether the prefetch plan differs from the expected one.
        /// Two plans that prefetch no row are equal, whatever their variants say.
        public var prefetchFails: Bool {
            policyCase.expectedPrefetch.map { $0 != actualPrefetch && !($0.isEmpty && actualPrefetch.isEmpty) } ?? false
        }

        /// Whether the running-loads choice differs from the expected one.
        public var runningLoadsFail: Bool { policyCase.expectedRunningLoads.map { $0 != actualRunningLoads } ?? false }

        /// For a case with a ladder: the whole decision (rung included).
        public var actualDecision: Decision?

        /// The width of the rung `actualDecision` loads or shows; nil for the placeholder.
        public var actualRungWidth: Int? {
            guard let decision = actualDecision, let url = decision.url else { return nil }
            return policyCase.ladder?.ladder.rung(at: url)?.width
        }

        /// For a case with a ladder: whether the decision's rule, action kind or rung differs.
        private var ladderDecisionFails: Bool {
            guard let ladder = policyCase.ladder else { return false }
            // A ladder case is judged on its whole decision: without one it fails.
            guard let decision = actualDecision else { return true }
            if let rule = policyCase.expectedRule, rule != decision.rule { return true }
            if let kind = ladder.expectedAction, kind != decision.action.kind { return true }
            switch ladder.expectedRung {
            case .notChecked: return false
            case .placeholder: return decision.action != .placeholder
            case .width(let width): return actualRungWidth != width
            }
        }

        /// Whether the revalidation of stale images differs from the expected one.
        public var staleRevalidationFails: Bool {
            policyCase.expectedStaleRevalidation.map { $0 != actualStaleRevalidation } ?? false
        }

        /// `case 3 (name): expected load thumbnail by rule x, got load original by rule y`; a
        /// failing prefetch plan or running-loads choice adds `expected prefetch ahead 5, behind 0,
        /// thumbnails, got nothing` or `expected running loads finish, got cancel`, joined by `; `.
        public var description: String {
            var label = "case \(position)"
            if let name = policyCase.name { label += " (\(name))" }
            var parts: [String] = []
            if decisionFails, let ladder = policyCase.ladder, let decision = actualDecision {
                var expected = ladder.expectedAction.map { "\($0)" } ?? "a decision"
                switch ladder.expectedRung {
                case .notChecked: break
                case .placeholder: expected = "placeholder"
                case .width(let width): expected += " of the \(width)-px rung"
                }
                if let rule = policyCase.expectedRule { expected += " by rule \(rule)" }
                let actual = decision.action.kind.rawValue + (actualRungWidth.map { " of the \($0)-px rung" } ?? "")
                parts.append("expected \(expected), got \(actual) by rule \(decision.rule)")
            } else if decisionFails {
                var expected = policyCase.expectedAction.map { "\($0)" } ?? "a decision"
                if let rule = policyCase.expectedRule { expected += " by rule \(rule)" }
                parts.append("expected \(expected), got \(actualAction) by rule \(actualRule)")
            }
            if prefetchFails, let expected = policyCase.expectedPrefetch {
                parts.append("expected prefetch \(expected), got \(actualPrefetch)")
            }
            if runningLoadsFail, let expected = policyCase.expectedRunningLoads {
                parts.append("expected running loads \(expected), got \(actualRunningLoads)")
            }
            if staleRevalidationFails, let expected = policyCase.expectedStaleRevalidation {
                parts.append("expected stale images \(expected ? "" : "not ")revalidated, got \(actualStaleRevalidation ? "" : "not ")revalidated")
            }
            return "\(label): " + parts.joined(separator: "; ")
        }
    }

    /// The input a case describes, with undeclared settings ignored (validation rejects them).
    public func input(for policyCase: PolicyCase) -> PolicyInput {
        PolicyInput(network: policyCase.network, cached: policyCase.cached, hasThumbnail: policyCase.hasThumbnail,
                    settings: resolveSettings(policyCase.settingValues).settings,
                    thumbnailCoversDisplay: policyCase.thumbnailCoversDisplay, isSlow: isSlow(policyCase.estimate))
    }

    /// Runs the policy's own cases; an empty result means every case holds.
    public func failingCases() -> [CaseFailure] {
        var failures: [CaseFailure] = []
        for (position, policyCase) in cases.enumerated() {
            let input = input(for: policyCase)
            let outcome = outcome(for: input)
            var failure = CaseFailure(policyCase: policyCase, position: position + 1, actualAction: outcome.action,
                                      actualRule: rules[outcome.ruleIndex].name,
                                      actualPrefetch: prefetchPlan(for: policyCase.network, settings: input.settings),
                                      actualRunningLoads: runningLoads(on: policyCase.network, settings: input.settings))
            failure.actualStaleRevalidation = revalidatesStale(on: policyCase.network)
            if let ladder = policyCase.ladder {
                failure.actualDecision = decide(ladder.item, network: policyCase.network, settings: input.settings,
                                                cached: ladder.cachedVariants, cachedRungs: ladder.cachedRungs,
                                                displayWidth: ladder.displayWidth, estimate: policyCase.estimate)
            }
            if failure.decisionFails || failure.prefetchFails || failure.runningLoadsFail || failure.staleRevalidationFails {
                failures.append(failure)
            }
        }
        return failures
    }
}
