/// A policy's boolean settings as bits, in the order the policy declares them.
///
/// Made once per batch of decisions by ``ImagePolicy/resolveSettings(from:)`` (the store's values,
/// else the declared defaults) or ``ImagePolicy/defaultSettings``. To set a setting for a while,
/// whatever the store says (a command's `--set`, a debug menu), override it by the key the
/// settings file names it with, rather than by its bit:
///
/// ```swift
/// let settings = try policy.resolveSettings(from: store)
///     .overriding("alwaysDownloadOriginalImage", with: true, in: policy)
/// ```
public struct ResolvedSettings: Sendable, Hashable {
    /// Bit `i` is the value of the policy's `i`-th declared setting.
    public var bits: UInt16

    /// Creates resolved settings from raw bits.
    @inlinable
    public init(bits: UInt16) { self.bits = bits }

    /// Whether the setting at `position` is on.
    @inlinable
    public func isOn(at position: Int) -> Bool { bits & (1 << position) != 0 }

    /// Whether the setting `key` is on, or nil when `policy` reads no setting of that name.
    ///
    /// - Parameters:
    ///   - key: the setting's key, as the settings file names it (`alwaysDownloadOriginalImage`).
    ///   - policy: the policy these settings were resolved for (it says which bit is `key`'s).
    public func isOn(_ key: String, in policy: ImagePolicy) -> Bool? {
        policy.settingPosition(key).map(isOn(at:))
    }

    /// These settings with the setting `key` set to `value`, the others as they are.
    ///
    /// - Parameters:
    ///   - key: the setting's key, as the settings file names it (`alwaysDownloadOriginalImage`).
    ///   - value: its value from now on.
    ///   - policy: the policy these settings were resolved for.
    /// - Throws: ``SettingOverrideError`` of kind ``SettingOverrideError/Kind/unknownKey`` when
    ///   `policy` reads no setting `key`; its message names the key, the policy and the keys it reads.
    public func overriding(_ key: String, with value: Bool, in policy: ImagePolicy) throws(SettingOverrideError) -> ResolvedSettings {
        guard let position = policy.settingPosition(key) else { throw .unknownKey(key, in: policy) }
        var settings = self
        settings.set(at: position, to: value)
        return settings
    }

    /// These settings with each of `overrides` applied in order (a later override of the same
    /// key wins).
    ///
    /// ```swift
    /// let overrides = try ["alwaysDownloadOriginalImage=on"].map { text throws(SettingOverrideError) in
    ///     try SettingOverride(parsing: text, in: policy)
    /// }
    /// let settings = try policy.resolveSettings(from: store).overriding(overrides, in: policy)
    /// ```
    ///
    /// - Throws: ``SettingOverrideError`` of kind ``SettingOverrideError/Kind/unknownKey`` for the
    ///   first override whose key `policy` does not read.
    public func overriding(_ overrides: [SettingOverride], in policy: ImagePolicy) throws(SettingOverrideError) -> ResolvedSettings {
        var settings = self
        for override in overrides {
            settings = try settings.overriding(override.key, with: override.value, in: policy)
        }
        return settings
    }

    /// Sets the bit of the setting at `position` (the policy's own resolution, by declaration order).
    mutating func set(at position: Int, to value: Bool) {
        if value { bits |= 1 << position } else { bits &= ~(1 << position) }
    }
}
