/// The rung part of a rule: how a `load` rule picks the rung to load, or which cached rung a
/// `show-cached` rule shows. A rule without one loads or shows its `variant`.
public enum RungSelection: Sendable, Hashable, CustomStringConvertible {
    /// A `load` rule's choice.
    case load(RungChoice)
    /// A `show-cached` rule's choice.
    case showCached(CachedRungChoice)

    /// `load the rung covering 1.0× the display`, `show the widest cached rung`.
    public var description: String {
        switch self {
        case .load(let choice): return "load the rung \(choice)"
        case .showCached(.covering): return "show the narrowest cached rung covering the display"
        case .showCached(.widest): return "show the widest cached rung"
        }
    }
}
