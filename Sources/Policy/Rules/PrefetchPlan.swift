/// What a list prefetches in one network state: how many rows ahead of and behind the visible
/// ones, and which of their variants. A plan never loads a variant the policy would not load for
/// a visible row in the same state: `.decided` loads what the decision for the row says, and
/// `.thumbnails` loads the row only when that decision is to load its thumbnail.
///
/// ```swift
/// let plan = policy.prefetchPlan(for: NetworkState(.cellular, isExpensive: true), settings: settings)
/// // plan.ahead == 5, plan.variants == .thumbnails with the bundled default policy
/// ```
///
/// ## See Also
///
/// - <doc:WritingAPolicy>
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

    /// Prefetch nothing.
    public static let nothing = PrefetchPlan(ahead: 0)

    /// Whether the plan prefetches no row.
    public var isEmpty: Bool { ahead == 0 && behind == 0 }

    /// `ahead 20, behind 0, decided` or `nothing`.
    public var description: String { isEmpty ? "nothing" : "ahead \(ahead), behind \(behind), \(variants.rawValue)" }
}
