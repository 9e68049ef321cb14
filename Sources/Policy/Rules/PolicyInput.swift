/// Everything a policy looks at, already resolved to plain values: the network, what is cached,
/// whether the item has a thumbnail, and the policy's boolean settings.
///
/// Settings are a bit set in the order of the policy's `settings` declarations; build them with
/// `ImagePolicy.resolveSettings(_:)` or `resolveSettings(from:)`, once per batch of decisions.
public struct PolicyInput: Sendable, Hashable, CustomStringConvertible {
    /// The network state.
    public var network: NetworkState
    /// The cached variants. A cached thumbnail counts only when `hasThumbnail` is true.
    public var cached: CachedVariants
    /// Whether the item has a thumbnail URL.
    public var hasThumbnail: Bool
    /// The policy's settings, resolved.
    public var settings: ResolvedSettings

    /// Creates an input.
    @inlinable
    public init(network: NetworkState, cached: CachedVariants, hasThumbnail: Bool, settings: ResolvedSettings) {
        self.network = network
        self.cached = cached
        self.hasThumbnail = hasThumbnail
        self.settings = settings
    }

    /// The index of this input in a compiled decision table: network kind in bits 0–2, then
    /// expensive, constrained, original cached, thumbnail cached, has thumbnail, then the settings.
    @inlinable
    var tableKey: Int {
        var key = network.kind.index
        if network.isExpensive { key |= 1 << 3 }
        if network.isConstrained { key |= 1 << 4 }
        key |= Int(cached.rawValue & (hasThumbnail ? 3 : 1)) << 5
        if hasThumbnail { key |= 1 << 7 }
        return key | Int(settings.bits) << 8
    }

    /// `network=cellular,expensive cached=none thumbnail=yes`, without the settings (which need
    /// the policy to be named).
    public var description: String {
        "network=\(network) cached=\(cached) thumbnail=\(hasThumbnail ? "yes" : "no")"
    }
}

/// A policy's boolean settings as bits, in the order the policy declares them.
public struct ResolvedSettings: Sendable, Hashable {
    /// Bit `i` is the value of the policy's `i`-th declared setting.
    public var bits: UInt16

    /// Creates resolved settings from raw bits.
    @inlinable
    public init(bits: UInt16) { self.bits = bits }

    /// Whether the setting at `position` is on.
    @inlinable
    public func isOn(at position: Int) -> Bool { bits & (1 << position) != 0 }
}
