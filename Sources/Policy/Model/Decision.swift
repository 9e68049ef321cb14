import Support
/// What to do for one item: show a cached variant, load a variant from its URL, or show the
/// placeholder; with the policy rule that decided and a one-line reason for people.
///
/// ```swift
/// let decision = try policy.decide(item, network: NetworkState(.cellular), settings: store, cache: cache)
/// switch decision.action {
/// case .showCached(let variant, let url): showFromCache(variant, url)
/// case .load(let variant, let url): startLoading(variant, url)
/// case .placeholder: showPlaceholder()
/// }
/// ```
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public struct Decision: Sendable, Hashable, CustomStringConvertible {
    /// The three things a decision can say.
    public enum Action: Sendable, Hashable {
        /// Show this variant from the cache; no download.
        case showCached(Variant, ImageURL)
        /// Download this variant from its URL.
        case load(Variant, ImageURL)
        /// Show the placeholder image; nothing is downloaded.
        case placeholder
    }

    /// What to do.
    public var action: Action
    /// The name of the policy rule that fired.
    public var rule: String
    /// Why, in one line.
    public var reason: String
    /// The network state the decision was made for.
    public var network: NetworkState
    /// The rung of the item's ladder a rung rule chose (its width, and its size when the item
    /// says it); nil for a rule that loads or shows a variant, and when the chosen rung's width
    /// is not known.
    public var rung: ImageRung?

    /// Creates a decision.
    public init(action: Action, rule: String, reason: String, network: NetworkState, rung: ImageRung? = nil) {
        self.action = action
        self.rule = rule
        self.reason = reason
        self.network = network
        self.rung = rung
    }

    /// The variant to show or load; nil for the placeholder.
    public var variant: Variant? {
        switch action {
        case .showCached(let variant, _), .load(let variant, _): return variant
        case .placeholder: return nil
        }
    }

    /// The URL of that variant; nil for the placeholder.
    public var url: ImageURL? {
        switch action {
        case .showCached(_, let url), .load(_, let url): return url
        case .placeholder: return nil
        }
    }

    /// One line: `load thumbnail https://… (rule cellular-thumbnail: …reason…)`.
    public var description: String {
        var text = action.kind.rawValue
        if let variant { text += " \(variant)" }
        if let rung { text += " (\(rung.width) px)" }
        if let url { text += " \(url)" }
        return text + " (rule \(rule): \(reason))"
    }
}

extension Decision.Action {
    /// The action without its variant and URL.
    public var kind: ActionKind {
        switch self {
        case .showCached: return .showCached
        case .load: return .load
        case .placeholder: return .placeholder
        }
    }
}

/// The action of a decision or rule without its variant: the names used in policy files and in
/// `--json` output.
public enum ActionKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Show a cached variant.
    case showCached = "show-cached"
    /// Download a variant.
    case load
    /// Show the placeholder.
    case placeholder

    /// `show-cached`, `load` or `placeholder`.
    public var description: String { rawValue }
}
