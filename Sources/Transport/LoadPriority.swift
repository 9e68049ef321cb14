import HTTPSemantics
/// How urgently a load is wanted: visible rows first (in screen order), then rows near the
/// screen, then prefetching.
///
/// Greater is more urgent. Within a tier, a smaller `order` (a row higher on screen, or nearer
/// to it) is more urgent.
///
/// ```swift
/// let firstRow = LoadPriority(.visible, order: 0)
/// let prefetch = LoadPriority(.prefetch, order: 12)
/// firstRow > prefetch   // true
/// ```
///
/// In use: the `Fetch` guide “Embedding in a List”.
public struct LoadPriority: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The class of a load.
    public enum Tier: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// Loaded ahead of need, for rows not yet near the screen.
        case prefetch
        /// For rows just off screen, about to be scrolled to.
        case near
        /// For rows on screen.
        case visible

        /// Compares by urgency: prefetch < near < visible.
        public static func < (lhs: Tier, rhs: Tier) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The class.
    public var tier: Tier
    /// The position within the tier: 0 is the most urgent.
    public var order: Int

    /// Creates a priority.
    public init(_ tier: Tier, order: Int = 0) {
        self.tier = tier
        self.order = order
    }

    /// A visible load with nothing ahead of it: what a lone slot or the command uses.
    public static let visible = LoadPriority(.visible)

    /// Compares by urgency: the tier first, then the smaller order is more urgent (greater).
    public static func < (lhs: LoadPriority, rhs: LoadPriority) -> Bool {
        lhs.tier != rhs.tier ? lhs.tier < rhs.tier : lhs.order > rhs.order
    }

    /// `visible#0`, `near#3`, `prefetch#12`.
    public var description: String { "\(tier)#\(order)" }
}
