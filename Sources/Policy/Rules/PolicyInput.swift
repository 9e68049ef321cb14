import Support
/// Everything a policy looks at, already resolved to plain values: the network, what is cached,
/// whether the item has a thumbnail, the policy's boolean settings, and whether the measured link
/// is slow.
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
    /// Whether the thumbnail is wide enough for the slot it is shown in (see
    /// `ImageItem.thumbnailCovers(displayWidth:)`); counts only when `hasThumbnail` is true.
    public var thumbnailCoversDisplay: Bool
    /// Whether the measured link is slow for the policy (see `SlowLinkThreshold`); never true
    /// offline. Read only by policies with a rule that tests `slow`.
    public var isSlow: Bool
    /// Whether some rung of the item's ladder is cached (its original or thumbnail for an item
    /// without one). Read only by policies with a rule that tests `"cached": {"any": …}` or
    /// `{"covering": …}`.
    public var anyRungCached: Bool
    /// Whether a cached rung covers the display (see `RungChoice` for what covers); implies
    /// `anyRungCached`.
    public var coveringRungCached: Bool

    /// Creates an input. A roaming network is expensive to every policy: `network.isExpensive` is
    /// set when `network.isRoaming` is; an offline network is never slow.
    @inlinable
    public init(network: NetworkState, cached: CachedVariants, hasThumbnail: Bool, settings: ResolvedSettings,
                thumbnailCoversDisplay: Bool = false, isSlow: Bool = false,
                anyRungCached: Bool = false, coveringRungCached: Bool = false) {
        self.network = network
        if network.isRoaming { self.network.isExpensive = true }
        self.cached = cached
        self.hasThumbnail = hasThumbnail
        self.settings = settings
        self.thumbnailCoversDisplay = thumbnailCoversDisplay && hasThumbnail
        self.isSlow = isSlow && network.kind != .offline
        self.coveringRungCached = coveringRungCached
        self.anyRungCached = anyRungCached || coveringRungCached
    }

    /// The index of this input in a compiled decision table: network kind in bits 0–2, then
    /// expensive, constrained, roaming, captive, original cached, thumbnail cached, has thumbnail,
    /// thumbnail covers the display, then the settings. Slowness and the cached rungs are not in
    /// it: their bits sit above the settings, only in the tables of policies that test them
    /// (`DecisionTable.slowBit`, `anyRungBit`, `coveringRungBit`).
    @inlinable
    var tableKey: Int {
        var key = network.kind.index
        if network.isExpensive || network.isRoaming { key |= TableKey.expensive }
        if network.isConstrained { key |= TableKey.constrained }
        if network.isRoaming { key |= TableKey.roaming }
        if network.isCaptive { key |= TableKey.captive }
        key |= Int(cached.rawValue & (hasThumbnail ? 3 : 1)) << TableKey.cachedShift
        if hasThumbnail { key |= TableKey.hasThumbnail }
        if thumbnailCoversDisplay && hasThumbnail { key |= TableKey.thumbnailCoversDisplay }
        return key | Int(settings.bits) << TableKey.settingsShift
    }

    /// The same input, with the network seen as offline: how a policy that does not test
    /// `captive` sees a captive network.
    var seenAsOffline: PolicyInput {
        var input = self
        input.network.kind = .offline
        input.network.isCaptive = false
        input.isSlow = false
        return input
    }

    /// `network=cellular,expensive cached=none thumbnail=yes`, without the settings (which need
    /// the policy to be named); ` slow=yes` is added for a slow link.
    public var description: String {
        "network=\(network) cached=\(cached) thumbnail=\(hasThumbnail ? "yes" : "no")"
            + (thumbnailCoversDisplay ? " thumbnail-covers-display=yes" : "") + (isSlow ? " slow=yes" : "")
            + (coveringRungCached ? " cached-rung=covering" : anyRungCached ? " cached-rung=narrower" : "")
    }
}

/// The bits of `PolicyInput.tableKey`.
@usableFromInline
enum TableKey {
    @usableFromInline static let kindMask = 0b111
    @usableFromInline static let expensive = 1 << 3
    @usableFromInline static let constrained = 1 << 4
    @usableFromInline static let roaming = 1 << 5
    @usableFromInline static let captive = 1 << 6
    @usableFromInline static let cachedShift = 7
    @usableFromInline static let thumbnailCached = 2 << cachedShift
    @usableFromInline static let hasThumbnail = 1 << 9
    @usableFromInline static let thumbnailCoversDisplay = 1 << 10
    @usableFromInline static let settingsShift = 11
}
