extension ImagePolicy {
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
