import Support
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
    private let coveringRungCached: Bool?
    private let anyRungCached: Bool?

    init(_ condition: RuleCondition, settings declarations: [SettingDeclaration]) {
        kinds = condition.networkBits.map(UInt64.init) ?? .max
        var settingsMask: UInt16 = 0, settingsValues: UInt16 = 0, wantsUndeclared = false
        for requirement in condition.settingRequirements {
            if let position = declarations.firstIndex(where: { $0.key == requirement.key }), position < UInt16.bitWidth {
                settingsMask |= 1 << position
                if requirement.wanted { settingsValues |= 1 << position }
            } else if requirement.wanted {
                wantsUndeclared = true
            }
        }
        self.settingsMask = settingsMask
        self.settingsValues = settingsValues
        wantsUndeclaredSetting = wantsUndeclared
        cachedMask = condition.cachedMask
        cachedValues = condition.cachedValues
        expensive = condition.expensive
        constrained = condition.constrained
        roaming = condition.roaming
        captive = condition.captive
        slow = condition.slow
        hasThumbnail = condition.hasThumbnail
        thumbnailCoversDisplay = condition.thumbnailCoversDisplay
        coveringRungCached = condition.coveringRungCached
        anyRungCached = condition.anyRungCached
    }

    func holds(for input: PolicyInput) -> Bool {
        let network = input.network
        if kinds & UInt64(network.kind.bit) == 0 || wantsUndeclaredSetting { return false }
        if let expensive, expensive != network.isExpensive { return false }
        if let constrained, constrained != network.isConstrained { return false }
        if let roaming, roaming != network.isRoaming { return false }
        if let captive, captive != network.isCaptive { return false }
        if let slow, slow != input.isSlow { return false }
        if input.settings.bits & settingsMask != settingsValues { return false }
        if input.cached.rawValue & cachedMask != cachedValues { return false }
        if let hasThumbnail, hasThumbnail != input.hasThumbnail { return false }
        if let thumbnailCoversDisplay, thumbnailCoversDisplay != input.thumbnailCoversDisplay { return false }
        if let coveringRungCached, coveringRungCached != input.coveringRungCached { return false }
        if let anyRungCached, anyRungCached != input.anyRungCached { return false }
        return true
    }
}
