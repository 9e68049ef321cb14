import Support
/// What the network looks like right now: the kind of link plus flags: expensive and constrained
/// as Apple's `NWPath` and Android's `NetworkCapabilities` report them, roaming (a modem
/// registered on a foreign network: the costliest data there is) and captive (the link is up but
/// a captive portal or a missing upstream stops downloads).
///
/// ```swift
/// let state = NetworkState(.cellular, isExpensive: true)
/// let parsed = NetworkState(parsing: "wifi,constrained")
/// let abroad = NetworkState(.cellular, isRoaming: true)     // expensive too
/// ```
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public struct NetworkState: Sendable, Hashable, CustomStringConvertible {
    /// The kind of link.
    public var kind: NetworkKind
    /// The link is metered: cellular, a personal hotspot, USB tethering.
    public var isExpensive: Bool
    /// The user asked to save data (Low Data Mode on Apple platforms, Data Saver on Android).
    public var isConstrained: Bool
    /// The modem is registered on a network abroad (ModemManager's 3GPP state `roaming`). Roaming
    /// is always expensive: the initializer and the parser set `isExpensive` with it, and a policy
    /// sees a roaming state as expensive whatever `isExpensive` holds.
    public var isRoaming: Bool
    /// The link is up but the internet is not reachable through it: a captive portal's login
    /// page, or no upstream (NetworkManager's connectivity `portal`, `limited` or `none`). A policy
    /// that does not test `captive` decides such a state as offline.
    public var isCaptive: Bool

    /// A link that costs the user nothing to use: Wi-Fi, wired or unknown (taken as free, as the
    /// article's tree takes it), neither expensive, constrained, roaming nor captive. Cellular is
    /// never free, even when no source said "metered". What `revalidateStale: free-link` and
    /// `HTTPOptions.revalidatesOnFreeLink` mean by a free link.
    @inlinable
    public var isFreeLink: Bool {
        switch kind {
        case .wifi, .wired, .unknown: !(isExpensive || isConstrained || isRoaming || isCaptive)
        case .cellular, .offline: false
        }
    }

    /// Creates a state. `isRoaming` implies `isExpensive`.
    @inlinable
    public init(_ kind: NetworkKind, isExpensive: Bool = false, isConstrained: Bool = false,
                isRoaming: Bool = false, isCaptive: Bool = false) {
        self.kind = kind
        self.isExpensive = isExpensive || isRoaming
        self.isConstrained = isConstrained
        self.isRoaming = isRoaming
        self.isCaptive = isCaptive
    }

    /// No network.
    public static let offline = NetworkState(.offline)

    /// Parses the form used by `IMGPOLICY_NETWORK`: a kind, optionally followed by any of
    /// `,expensive`, `,constrained`, `,roaming` (which implies expensive) and `,captive`
    /// (`cellular,roaming`). Returns nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingSpaces().lowercased() }
        guard let first = parts.first, let kind = NetworkKind(rawValue: first) else { return nil }
        self.init(kind)
        for flag in parts.dropFirst() {
            switch flag {
            case "expensive": isExpensive = true
            case "constrained": isConstrained = true
            case "roaming": isRoaming = true; isExpensive = true
            case "captive": isCaptive = true
            default: return nil
            }
        }
    }

    /// `kind`, followed by `,expensive`, `,constrained`, `,roaming` and `,captive` when set: the
    /// form `init(parsing:)` reads.
    public var description: String {
        var text = kind.rawValue
        if isExpensive { text += ",expensive" }
        if isConstrained { text += ",constrained" }
        if isRoaming { text += ",roaming" }
        if isCaptive { text += ",captive" }
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
