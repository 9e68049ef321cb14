/// Which cached rung a rule that shows a cached image shows (the rule's `"rung"` with the action
/// `show-cached`).
public enum CachedRungChoice: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The narrowest cached rung that covers the display (the widest rung when the display width
    /// is not known): needs `"cached": {"covering": true}`.
    case covering
    /// The widest cached rung: needs `"cached": {"any": true}`.
    case widest

    /// `covering` or `widest`.
    public var description: String { rawValue }
}
