extension ImagePolicy {
    /// A case without a ladder that expects an action and variant cannot judge a rule that
    /// chooses a rung (its decision depends on the item's widths): such a case is refused, naming
    /// the case and the rule, so that it never passes for a decision it did not check.
    func checkVariantCasesOfRungRules(source: String) throws(DataFileError) {
        for (position, policyCase) in cases.enumerated() where policyCase.ladder == nil {
            guard let expected = policyCase.expectedAction else { continue }
            let rule = rules[outcome(for: input(for: policyCase)).ruleIndex]
            guard rule.rung != nil else { continue }
            throw DataFileError(.invalid, source: source, line: policyCase.line, context: "case \(position + 1)",
                                message: "expects \(expected), but the rule \"\(rule.name)\" that fires chooses a rung: give the case a "
                                    + "\"ladder\" and expect a \"rungWidth\"")
        }
    }

    /// The decision of a rule that chooses a rung: the rung its choice picks, or the cached rung
    /// it shows; the item's original URL as the original, every other rung as the thumbnail.
    func decide(_ item: ImageItem, choosing rung: RungSelection, rule: PolicyRule, cachedRungs: CachedRungs,
                displayWidth: Int?, estimate: LinkEstimate?, network: NetworkState) -> Decision {
        let candidates = item.rungCandidates
        let index: Int?
        switch rung {
        case .load(let choice): index = choice.index(among: candidates, displayWidth: displayWidth, estimate: estimate)
        case .showCached(.covering): index = cachedRungs.coveringIndex(among: candidates, displayWidth: displayWidth)
        case .showCached(.widest): index = cachedRungs.widestIndex(among: candidates)
        }
        // Validation guarantees a cached rung for every input a show-cached rung rule fires for.
        guard let index else {
            return Decision(action: .placeholder, rule: rule.name, reason: rule.reason, network: network)
        }
        let candidate = candidates[index]
        let variant = item.variant(of: candidate)
        let action: Decision.Action = rule.action.kind == .load ? .load(variant, candidate.url) : .showCached(variant, candidate.url)
        return Decision(action: action, rule: rule.name, reason: rule.reason, network: network, rung: candidate.rung)
    }

    /// `decision` for an item with a ladder (or of a rung rule), with what is cached put first:
    /// a load of a rung when one at least as wide is cached shows the narrowest such instead (a
    /// wider cached rung is decoded down; nothing narrower is fetched), and the placeholder when
    /// a rung is cached shows the widest cached rung. The rule's name is kept; the reason says
    /// what was shown instead.
    func preferringCachedRungs(_ decision: Decision, of item: ImageItem, cachedRungs: CachedRungs) -> Decision {
        guard cachedRungs.bits != 0 else { return decision }
        let candidates = item.rungCandidates
        let index: Int, reason: String
        switch decision.action {
        case .showCached:
            return decision
        case .load(_, let url):
            guard let loaded = candidates.firstIndex(where: { $0.url == url }),
                  let cached = candidates.indices.first(where: { $0 >= loaded && cachedRungs.contains($0) }) else { return decision }
            index = cached
            reason = "an image of the item as wide or wider (\(Self.widthText(candidates[cached]))) is cached, so it is shown "
                + "instead of downloading \(Self.widthText(candidates[loaded]))"
        case .placeholder:
            guard let widest = cachedRungs.widestIndex(among: candidates) else { return decision }
            index = widest
            reason = "an image of the item (\(Self.widthText(candidates[widest]))) is cached, so it is shown instead of the placeholder"
        }
        let candidate = candidates[index]
        return Decision(action: .showCached(item.variant(of: candidate), candidate.url), rule: decision.rule,
                        reason: reason + " (the rule: \(decision.reason))", network: decision.network, rung: candidate.rung)
    }

    /// `640 px`, or `its width unknown`.
    private static func widthText(_ candidate: RungCandidate) -> String {
        candidate.width.map { "\($0) px" } ?? "width unknown"
    }
}
