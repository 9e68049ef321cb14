/// What a list prefetches in one network state: how many rows ahead of and behind the visible
/// ones, and which of their variants. A plan never loads a variant the policy would not load for
/// a visible row in the same state: `.decided` loads what the decision for the row says, and
/// `.thumbnails` loads the row only when that decision is to load its thumbnail. A row whose
/// decision shows a cached variant or the placeholder is never prefetched. Ask
/// `prefetch(for:)` with the row's decision (made as for a visible row, in the same state and
/// settings) and prefetch what it returns, nothing else.
///
/// ```swift
/// let plan = policy.prefetchPlan(for: NetworkState(.cellular, isExpensive: true), settings: settings)
/// // plan.ahead == 5, plan.variants == .thumbnails with the bundled default policy
/// ```
public struct PrefetchPlan: Sendable, Hashable, CustomStringConvertible {
    /// Which rows' decided variants are prefetched.
    public enum Variants: String, Sendable, Hashable, CaseIterable {
        /// Whatever the decision for the row loads.
        case decided
        /// Only rows whose decision is to load the thumbnail.
        case thumbnails
    }

    /// Rows after the last visible one to prefetch.
    public var ahead: Int
    /// Rows before the first visible one to prefetch.
    public var behind: Int
    /// Which rows' variants.
    public var variants: Variants

    /// Creates a plan (negative counts are taken as 0).
    public init(ahead: Int, behind: Int = 0, variants: Variants = .decided) {
        self.ahead = max(0, ahead)
        self.behind = max(0, behind)
        self.variants = variants
    }

    /// The most rows a policy file may ask for ahead or behind.
    public static let maximumRows = 1000

    /// Prefetch nothing.
    public static let nothing = PrefetchPlan(ahead: 0)

    /// Whether the plan prefetches no row.
    public var isEmpty: Bool { ahead == 0 && behind == 0 }

    /// The variant to prefetch for a row whose decision, made as for a visible row in the same
    /// state, is `action`; nil when the row is not prefetched (an empty plan, a decision that loads
    /// nothing, or `.thumbnails` and a decision that loads the original).
    public func prefetchedVariant(for action: RuleAction) -> Variant? {
        guard !isEmpty, case .load(let variant) = action else { return nil }
        switch variants {
        case .decided: return variant
        case .thumbnails: return variant == .thumbnail ? variant : nil
        }
    }

    /// What to prefetch for a row whose decision (made as for a visible row, in the same state and
    /// settings) is `decision`: the variant and URL that decision loads, or nil when the plan does
    /// not prefetch the row.
    ///
    /// ```swift
    /// let decision = policy.decide(item, network: state, settings: settings, cached: cached)
    /// if let (variant, url) = plan.prefetch(for: decision) { startPrefetch(variant, url) }
    /// ```
    public func prefetch(for decision: Decision) -> (variant: Variant, url: ImageURL)? {
        guard case .load(let variant, let url) = decision.action, prefetchedVariant(for: .load(variant)) != nil else { return nil }
        return (variant, url)
    }

    /// `ahead 20, behind 0, decided` or `nothing`.
    public var description: String { isEmpty ? "nothing" : "ahead \(ahead), behind \(behind), \(variants.rawValue)" }
}
