/// A boolean setting that a policy reads, with the value it has when nobody stored one.
public struct SettingDeclaration: Sendable, Hashable {
    /// The settings store key, e.g. `alwaysDownloadOriginalImage`.
    public var key: String
    /// Its value when the store has none.
    public var defaultValue: Bool

    /// Creates a declaration.
    public init(_ key: String, default defaultValue: Bool) {
        self.key = key
        self.defaultValue = defaultValue
    }
}
