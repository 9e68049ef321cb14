/// One boolean setting set to a value for a while, whatever the settings store says: the key as
/// the settings file names it, and the value (what `imgpolicy --set KEY=VALUE` asks for).
///
/// Apply it with ``ResolvedSettings/overriding(_:in:)``:
///
/// ```swift
/// let override = try SettingOverride(parsing: "alwaysDownloadOriginalImage=on", in: policy)
/// let settings = try policy.resolveSettings(from: store).overriding([override], in: policy)
/// ```
public struct SettingOverride: Sendable, Hashable, CustomStringConvertible {
    /// The setting's key, as the settings file names it (`alwaysDownloadOriginalImage`).
    public var key: String
    /// The value it takes.
    public var value: Bool

    /// Creates an override of `key` to `value` (checked against a policy when applied).
    public init(_ key: String, _ value: Bool) {
        self.key = key
        self.value = value
    }

    /// Reads `key=value` as a user types it, checked against `policy`: the text up to the first
    /// `=` is the key, the rest the value, one of true/false, yes/no, on/off, 1/0 (any case;
    /// ``SettingValue/parseBool(_:)``).
    ///
    /// - Parameters:
    ///   - text: the override, e.g. `alwaysDownloadOriginalImage=on`.
    ///   - policy: the policy whose settings it overrides.
    /// - Throws: ``SettingOverrideError``, checked in this order: no `=`
    ///   (``SettingOverrideError/Kind/malformed``), a key `policy` does not read
    ///   (``SettingOverrideError/Kind/unknownKey``), a value that is not a boolean
    ///   (``SettingOverrideError/Kind/notBoolean``).
    public init(parsing text: String, in policy: ImagePolicy) throws(SettingOverrideError) {
        guard let equals = text.firstIndex(of: "=") else { throw .malformed(text) }
        let key = String(text[..<equals])
        let valueText = String(text[text.index(after: equals)...])
        guard policy.settingPosition(key) != nil else { throw .unknownKey(key, in: policy, text: text) }
        guard let value = SettingValue.parseBool(valueText) else { throw .notBoolean(valueText, key: key, text: text) }
        self.init(key, value)
    }

    /// `key=true` or `key=false`.
    public var description: String {
        "\(key)=\(value)"
    }
}
