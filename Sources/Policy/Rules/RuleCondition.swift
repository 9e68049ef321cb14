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
    /// The network kinds it applies to; nil for any.
    public var networks: Set<NetworkKind>?
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
    public var settings: [String: Bool]
    /// Required cache state of each variant (`true`: cached, `false`: not cached).
    public var cached: [Variant: Bool]
    /// Whether the item must (`true`) or must not (`false`) have a thumbnail URL; nil for either.
    public var hasThumbnail: Bool?
    /// Whether the item's thumbnail must (`true`) or must not (`false`) cover the display: the item
    /// says the thumbnail's width, the slot its display width, and the thumbnail is at least as
    /// wide as the display (or as the original); nil for either.
    public var thumbnailCoversDisplay: Bool?
    /// Whether the measured link must (`true`) or must not (`false`) be slow, by the policy's
    /// `slowBelow` threshold (an unmeasured or offline link is not slow); nil for either.
    public var slow: Bool?

    /// Creates a condition; every constraint left out matches anything.
    public init(networks: Set<NetworkKind>? = nil, expensive: Bool? = nil, constrained: Bool? = nil,
                roaming: Bool? = nil, captive: Bool? = nil,
                settings: [String: Bool] = [:], cached: [Variant: Bool] = [:], hasThumbnail: Bool? = nil,
                thumbnailCoversDisplay: Bool? = nil, slow: Bool? = nil) {
        self.networks = networks
        self.expensive = expensive
        self.constrained = constrained
        self.roaming = roaming
        self.captive = captive
        self.settings = settings
        self.cached = cached
        self.hasThumbnail = hasThumbnail
        self.thumbnailCoversDisplay = thumbnailCoversDisplay
        self.slow = slow
    }

    /// The condition that always holds.
    public static let always = RuleCondition()

    /// True when no constraint is set: the rule matches every input.
    public var isCatchAll: Bool {
        networks == nil && expensive == nil && constrained == nil && roaming == nil && captive == nil
            && settings.isEmpty && cached.isEmpty && hasThumbnail == nil && thumbnailCoversDisplay == nil && slow == nil
    }

    /// Nil when the condition holds for `input`; otherwise the first constraint that fails, in
    /// words (for `--explain`).
    public func mismatch(for input: PolicyInput, settingValue: (String) -> Bool) -> String? {
        if let networks, !networks.contains(input.network.kind) {
            return "network is \(input.network.kind), not \(networks.sorted { $0.index < $1.index }.map(\.rawValue).joined(separator: " or "))"
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
        for (key, wanted) in settings.sorted(by: { $0.key < $1.key }) where settingValue(key) != wanted {
            return "setting \(key) is \(wanted ? "off" : "on")"
        }
        for variant in Variant.allCases {
            if let wanted = cached[variant], wanted != input.cached.has(variant) {
                return "the \(variant) is \(wanted ? "not " : "")cached"
            }
        }
        if let hasThumbnail, hasThumbnail != input.hasThumbnail {
            return input.hasThumbnail ? "the item has a thumbnail" : "the item has no thumbnail"
        }
        if let thumbnailCoversDisplay, thumbnailCoversDisplay != input.thumbnailCoversDisplay {
            return input.thumbnailCoversDisplay ? "the thumbnail covers the display" : "the thumbnail does not cover the display"
        }
        return nil
    }


    /// The constraints in words, for `--explain` and listings: `network is cellular or unknown and
    /// alwaysDownloadOriginalImage is on`; `always` for a catch-all.
    public var summary: String {
        var parts: [String] = []
        if let networks {
            parts.append("network is " + networks.sorted { $0.index < $1.index }.map(\.rawValue).joined(separator: " or "))
        }
        if let expensive { parts.append(expensive ? "expensive" : "not expensive") }
        if let constrained { parts.append(constrained ? "constrained" : "not constrained") }
        if let roaming { parts.append(roaming ? "roaming" : "not roaming") }
        if let captive { parts.append(captive ? "captive" : "not captive") }
        if let slow { parts.append(slow ? "slow" : "not slow") }
        for (key, wanted) in settings.sorted(by: { $0.key < $1.key }) { parts.append("\(key) is \(wanted ? "on" : "off")") }
        for variant in Variant.allCases {
            if let wanted = cached[variant] { parts.append("\(variant) \(wanted ? "" : "not ")cached") }
        }
        if let hasThumbnail { parts.append(hasThumbnail ? "has a thumbnail" : "has no thumbnail") }
        if let thumbnailCoversDisplay {
            parts.append(thumbnailCoversDisplay ? "the thumbnail covers the display" : "the thumbnail does not cover the display")
        }
        return parts.isEmpty ? "always" : parts.joined(separator: " and ")
    }
}
