import Support
/// When a rule applies: every constraint that is set must hold; a condition with none set is a
/// catch-all.
///
/// ```swift
/// RuleCondition(networks: [.cellular, .unknown], settings: ["alwaysDownloadOriginalImage": true])
/// ```
///
/// ## See Also
///
/// - <doc:WritingAPolicy>
public struct RuleCondition: Sendable, Hashable {
    // The network kinds, settings and cached variants are stored as bit masks and a sorted array
    // rather than as `Set` and `Dictionary`: loading a policy then makes no `Set<NetworkKind>` or
    // `Dictionary<Variant, Bool>`, each of whose first use costs a search of the executable's
    // protocol conformances at run time (docs/startup.md). The public properties below read and
    // write these as sets and dictionaries, as before.

    /// One bit per `NetworkKind.index`; nil for any kind.
    private(set) var networkBits: UInt8?
    /// The settings read, sorted by key, each key once.
    private(set) var settingRequirements: [SettingRequirement] = []
    /// The variants whose cache state is read (`CachedVariants` bits) and the state wanted.
    private(set) var cachedMask: UInt8 = 0
    private(set) var cachedValues: UInt8 = 0

    /// The network kinds it applies to; nil for any.
    public var networks: Set<NetworkKind>? {
        get { networkBits.map { bits in Set(NetworkKind.allCases.filter { bits & $0.bit != 0 }) } }
        set { networkBits = newValue.map { kinds in kinds.reduce(0) { $0 | $1.bit } } }
    }
    /// Required value of `NetworkState.isExpensive`; nil for either.
    public var expensive: Bool?
    /// Required value of `NetworkState.isConstrained`; nil for either.
    public var constrained: Bool?
    /// Required value of `NetworkState.isRoaming`; nil for either.
    public var roaming: Bool?
    /// Required value of `NetworkState.isCaptive`; nil for either. A policy none of whose rules
    /// sets it sees a captive network as offline.
    public var captive: Bool?
    /// Required values of boolean settings, by key.
    public var settings: [String: Bool] {
        get { settingRequirements.dictionary }
        set { settingRequirements = [SettingRequirement](sortedFrom: newValue) }
    }
    /// Required cache state of each variant (`true`: cached, `false`: not cached).
    public var cached: [Variant: Bool] {
        get {
            var result: [Variant: Bool] = [:]
            for variant in Variant.allCases { result[variant] = cachedRequirement(for: variant) }
            return result
        }
        set {
            cachedMask = 0
            cachedValues = 0
            for (variant, wanted) in newValue { requireCached(variant, wanted) }
        }
    }
    /// Whether the item must (`true`) or must not (`false`) have a thumbnail URL; nil for either.
    public var hasThumbnail: Bool?
    /// Whether the item's thumbnail must (`true`) or must not (`false`) cover the display: the item
    /// says the thumbnail's width, the slot its display width, and the thumbnail is at least as
    /// wide as the display (or as the original); nil for either.
    public var thumbnailCoversDisplay: Bool?
    /// Whether the measured link must (`true`) or must not (`false`) be slow, by the policy's
    /// `slowBelow` threshold (an unmeasured or offline link is not slow); nil for either.
    public var slow: Bool?
    /// Whether a cached rung of the item's ladder must (`true`) or must not (`false`) cover the
    /// display (`"cached": {"covering": true}`); nil for either.
    public var coveringRungCached: Bool?
    /// Whether some rung of the item's ladder must (`true`) or must not (`false`) be cached
    /// (`"cached": {"any": true}`); nil for either.
    public var anyRungCached: Bool?

    /// Creates a condition; every constraint left out matches anything.
    public init(networks: Set<NetworkKind>? = nil, expensive: Bool? = nil, constrained: Bool? = nil,
                roaming: Bool? = nil, captive: Bool? = nil,
                settings: [String: Bool] = [:], cached: [Variant: Bool] = [:], hasThumbnail: Bool? = nil,
                thumbnailCoversDisplay: Bool? = nil, slow: Bool? = nil) {
        self.expensive = expensive
        self.constrained = constrained
        self.roaming = roaming
        self.captive = captive
        self.hasThumbnail = hasThumbnail
        self.thumbnailCoversDisplay = thumbnailCoversDisplay
        self.slow = slow
        self.networks = networks
        if !settings.isEmpty { self.settings = settings }
        if !cached.isEmpty { self.cached = cached }
    }

    /// The condition that always holds.
    public static let always = RuleCondition()

    /// True when no constraint is set: the rule matches every input.
    public var isCatchAll: Bool {
        networkBits == nil && expensive == nil && constrained == nil && roaming == nil && captive == nil
            && settingRequirements.isEmpty && cachedMask == 0 && hasThumbnail == nil && thumbnailCoversDisplay == nil && slow == nil
            && coveringRungCached == nil && anyRungCached == nil
    }

    /// Nil when the condition holds for `input`; otherwise the first constraint that fails, in
    /// words (for `--explain`).
    public func mismatch(for input: PolicyInput, settingValue: (String) -> Bool) -> String? {
        if let networkBits, networkBits & input.network.kind.bit == 0 {
            return "network is \(input.network.kind), not \(Self.names(ofNetworkBits: networkBits))"
        }
        if let expensive, expensive != input.network.isExpensive {
            return input.network.isExpensive ? "the network is expensive" : "the network is not expensive"
        }
        if let constrained, constrained != input.network.isConstrained {
            return input.network.isConstrained ? "the network is constrained" : "the network is not constrained"
        }
        if let roaming, roaming != input.network.isRoaming {
            return input.network.isRoaming ? "the network is roaming" : "the network is not roaming"
        }
        if let captive, captive != input.network.isCaptive {
            return input.network.isCaptive ? "the network is captive" : "the network is not captive"
        }
        if let slow, slow != input.isSlow {
            return input.isSlow ? "the link is slow" : "the link is not slow (or not measured)"
        }
        for requirement in settingRequirements where settingValue(requirement.key) != requirement.wanted {
            return "setting \(requirement.key) is \(requirement.wanted ? "off" : "on")"
        }
        for variant in Variant.allCases {
            if let wanted = cachedRequirement(for: variant), wanted != input.cached.has(variant) {
                return "the \(variant) is \(wanted ? "not " : "")cached"
            }
        }
        if let hasThumbnail, hasThumbnail != input.hasThumbnail {
            return input.hasThumbnail ? "the item has a thumbnail" : "the item has no thumbnail"
        }
        if let thumbnailCoversDisplay, thumbnailCoversDisplay != input.thumbnailCoversDisplay {
            return input.thumbnailCoversDisplay ? "the thumbnail covers the display" : "the thumbnail does not cover the display"
        }
        if let anyRungCached, anyRungCached != input.anyRungCached {
            return input.anyRungCached ? "a rung is cached" : "no rung is cached"
        }
        if let coveringRungCached, coveringRungCached != input.coveringRungCached {
            return input.coveringRungCached ? "a cached rung covers the display" : "no cached rung covers the display"
        }
        return nil
    }


    /// The constraints in words, for `--explain` and listings: `network is cellular or unknown and
    /// alwaysDownloadOriginalImage is on`; `always` for a catch-all.
    public var summary: String {
        var parts: [String] = []
        if let networkBits { parts.append("network is " + Self.names(ofNetworkBits: networkBits)) }
        if let expensive { parts.append(expensive ? "expensive" : "not expensive") }
        if let constrained { parts.append(constrained ? "constrained" : "not constrained") }
        if let roaming { parts.append(roaming ? "roaming" : "not roaming") }
        if let captive { parts.append(captive ? "captive" : "not captive") }
        if let slow { parts.append(slow ? "slow" : "not slow") }
        for requirement in settingRequirements { parts.append("\(requirement.key) is \(requirement.wanted ? "on" : "off")") }
        for variant in Variant.allCases {
            if let wanted = cachedRequirement(for: variant) { parts.append("\(variant) \(wanted ? "" : "not ")cached") }
        }
        if let hasThumbnail { parts.append(hasThumbnail ? "has a thumbnail" : "has no thumbnail") }
        if let thumbnailCoversDisplay {
            parts.append(thumbnailCoversDisplay ? "the thumbnail covers the display" : "the thumbnail does not cover the display")
        }
        if let anyRungCached { parts.append(anyRungCached ? "a rung is cached" : "no rung is cached") }
        if let coveringRungCached {
            parts.append(coveringRungCached ? "a cached rung covers the display" : "no cached rung covers the display")
        }
        return parts.isEmpty ? "always" : parts.joined(separator: " and ")
    }

    /// The kinds of `bits` in index order, joined by "or": `cellular or unknown`.
    private static func names(ofNetworkBits bits: UInt8) -> String {
        NetworkKind.allCases.filter { bits & $0.bit != 0 }.map(\.rawValue).joined(separator: " or ")
    }

    /// The cache state of `variant` the condition requires; nil when it does not read it.
    func cachedRequirement(for variant: Variant) -> Bool? {
        let bit = CachedVariants(variant).rawValue
        return cachedMask & bit == 0 ? nil : cachedValues & bit != 0
    }

    /// Requires `variant` to be cached (`true`) or not (`false`).
    mutating func requireCached(_ variant: Variant, _ wanted: Bool) {
        let bit = CachedVariants(variant).rawValue
        cachedMask |= bit
        if wanted { cachedValues |= bit } else { cachedValues &= ~bit }
    }

    /// Requires the setting `key` to be on (`true`) or off (`false`), replacing an earlier
    /// requirement on the same key.
    mutating func requireSetting(_ key: String, _ wanted: Bool) { settingRequirements.set(key, wanted) }

    /// Restricts the condition to the network kinds of `bits` (one bit per `NetworkKind.index`).
    mutating func requireNetworks(bits: UInt8) { networkBits = bits }
}
