import Support
/// What a rule decides, before it is applied to an item's URLs.
public enum RuleAction: Sendable, Hashable, CustomStringConvertible {
    /// Show this variant from the cache.
    case showCached(Variant)
    /// Download this variant.
    case load(Variant)
    /// Show the placeholder.
    case placeholder

    /// The action's kind.
    public var kind: ActionKind {
        switch self {
        case .showCached: return .showCached
        case .load: return .load
        case .placeholder: return .placeholder
        }
    }

    /// The variant shown or loaded; nil for the placeholder.
    public var variant: Variant? {
        switch self {
        case .showCached(let variant), .load(let variant): return variant
        case .placeholder: return nil
        }
    }

    /// `show-cached original`, `load thumbnail`, `placeholder`.
    public var description: String {
        variant.map { "\(kind) \($0)" } ?? kind.rawValue
    }
}
