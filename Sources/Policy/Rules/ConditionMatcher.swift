/// A `RuleCondition` compiled for the validator, which asks every rule and list entry about every
/// input a policy can tell apart: the network kinds, the settings and the cached variants become
/// bit masks, so that matching is a few integer tests instead of set and dictionary lookups
/// (docs/startup.md). It holds exactly when `RuleCondition.holds(for:settingValue:)` does with
/// a setting the policy does not declare read as off.
struct ConditionMatcher {
    /// One bit per `NetworkKind.index`; every bit when the condition names no kind.
    private let kinds: UInt64
    /// The settings the condition reads (bit = position among the declarations) and their wanted values.
    private let settingsMask: UInt16
    private let settingsValues: UInt16
    /// The cached variants the condition reads (`CachedVariants` bits) and their wanted state.
    private let cachedMask: UInt8
    private let cachedValues: UInt8
    /// Wants on a setting the policy does not declare (read as off): the condition never holds.
    private let wantsUndeclaredSetting: Bool
    private let expensive: Bool?
    private let constrained: Bool?
    private let roaming: Bool?
    private let captive: Bool?
    private let slow: Bool?
    private let hasThumbnail: Bool?
    private let thumbnailCoversDisplay: Bool?

    init(_ condition: RuleCondition, settings declarations: [SettingDeclaration]) {
        var kinds: UInt64 = 0
        if let networks = condition.networks {
            for kind in networks { kinds |= 1 << UInt64(kind.index) }
        } else {
            kinds = .max
        }
        self.kinds = kinds
        var settingsMask: UInt16 = 0, settingsValues: UInt16 = 0, wantsUndeclared = false
        for (key, wanted) in condition.settings {
            if let position = declarations.firstIndex(where: { $0.key == key }), position < UInt16.bitWidth {
                settingsMask |= 1 << position
                if wanted { settingsValues |= 1 << position }
            } else if wanted {
                wantsUndeclared = true
            }
        }
        self.settingsMask = settingsMask
        self.settingsValues = settingsValues
        wantsUndeclaredSetting = wantsUndeclared
        var cachedMask: UInt8 = 0, cachedValues: UInt8 = 0
        for (variant, wanted) in condition.cached {
            let bit = CachedVariants(variant).rawValue
            cachedMask |= bit
            if wanted { cachedValues |= bit }
        }
        self.cachedMask = cachedMask
        self.cachedValues = cachedValues
        expensive = condition.expensive
        constrained = condition.constrained
        roaming = condition.roaming
        captive = condition.captive
        slow = condition.slow
        hasThumbnail = condition.hasThumbnail
        thumbnailCoversDisplay = condition.thumbnailCoversDisplay
    }

    func holds(for input: PolicyInput) -> Bool {
        let network = input.network
        if kinds & (1 << UInt64(network.kind.index)) == 0 || wantsUndeclaredSetting { return false }
        if let expensive, expensive != network.isExpensive { return false }
        if let constrained, constrained != network.isConstrained { return false }
        if let roaming, roaming != network.isRoaming { return false }
        if let captive, captive != network.isCaptive { return false }
        if let slow, slow != input.isSlow { return false }
        if input.settings.bits & settingsMask != settingsValues { return false }
        if input.cached.rawValue & cachedMask != cachedValues { return false }
        if let hasThumbnail, hasThumbnail != input.hasThumbnail { return false }
        if let thumbnailCoversDisplay, thumbnailCoversDisplay != input.thumbnailCoversDisplay { return false }
        return true
    }
}
