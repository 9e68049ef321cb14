/// What the network looks like right now: the kind of link plus two flags, as Apple's `NWPath`
/// and Android's `NetworkCapabilities` report them.
///
/// ```swift
/// let state = NetworkState(.cellular, isExpensive: true)
/// let parsed = try NetworkState(parsing: "wifi,constrained")
/// ```
public struct NetworkState: Sendable, Hashable, CustomStringConvertible {
    /// The kind of link.
    public var kind: NetworkKind
    /// The link is metered: cellular, a personal hotspot, USB tethering.
    public var isExpensive: Bool
    /// The user asked to save data (Low Data Mode on Apple platforms, Data Saver on Android).
    public var isConstrained: Bool

    /// Creates a state.
    @inlinable
    public init(_ kind: NetworkKind, isExpensive: Bool = false, isConstrained: Bool = false) {
        self.kind = kind
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }

    /// No network.
    public static let offline = NetworkState(.offline)

    /// Parses the form used by `IMGPOLICY_NETWORK`: a kind, optionally followed by `,expensive`
    /// and/or `,constrained` (`cellular,expensive`). Returns nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingSpaces().lowercased() }
        guard let first = parts.first, let kind = NetworkKind(rawValue: first) else { return nil }
        self.init(kind)
        for flag in parts.dropFirst() {
            switch flag {
            case "expensive": isExpensive = true
            case "constrained": isConstrained = true
            default: return nil
            }
        }
    }

    /// `kind`, followed by `,expensive` and `,constrained` when set: the form `init(parsing:)` reads.
    public var description: String {
        var text = kind.rawValue
        if isExpensive { text += ",expensive" }
        if isConstrained { text += ",constrained" }
        return text
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var slice = self
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return slice
    }
}
