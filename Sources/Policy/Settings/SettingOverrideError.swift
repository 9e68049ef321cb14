/// Why a setting could not be overridden (``SettingOverride``,
/// ``ResolvedSettings/overriding(_:with:in:)``): the kind, the text as given, the key and, for an
/// unknown key, the policy and the keys it reads.
///
/// A public struct over a private code: new kinds may be added without breaking callers; compare
/// `kind` with the static members (`error.kind == .unknownKey`).
public struct SettingOverrideError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case malformed, unknownKey, notBoolean
        }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The text is not `key=value` (it has no `=`).
        public static let malformed = Kind(.malformed)
        /// The policy reads no setting of that key (a misspelt key would otherwise change nothing).
        public static let unknownKey = Kind(.unknownKey)
        /// The value is none of true/false, yes/no, on/off, 1/0.
        public static let notBoolean = Kind(.notBoolean)

        /// The kind in a few words.
        public var description: String {
            switch code {
            case .malformed: "not key=value"
            case .unknownKey: "unknown setting"
            case .notBoolean: "not a boolean"
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// The override as the user wrote it (`alwaysDownloadOriginalImage=maybe`); nil when it was
    /// given as a key and a value.
    public var text: String?
    /// The setting's key, when the text has one.
    public var key: String?
    /// The value as written, for ``Kind/notBoolean``.
    public var value: String?
    /// The policy's name, for ``Kind/unknownKey``.
    public var policyName: String?
    /// The keys the policy reads, in its order, for ``Kind/unknownKey``.
    public var knownKeys: [String]

    /// Creates an error.
    public init(kind: Kind, text: String? = nil, key: String? = nil, value: String? = nil, policyName: String? = nil,
                knownKeys: [String] = []) {
        self.kind = kind
        self.text = text
        self.key = key
        self.value = value
        self.policyName = policyName
        self.knownKeys = knownKeys
    }

    static func malformed(_ text: String) -> SettingOverrideError {
        SettingOverrideError(kind: .malformed, text: text)
    }

    static func unknownKey(_ key: String, in policy: ImagePolicy, text: String? = nil) -> SettingOverrideError {
        SettingOverrideError(kind: .unknownKey, text: text, key: key, policyName: policy.name, knownKeys: policy.settings.map(\.key))
    }

    static func notBoolean(_ value: String, key: String, text: String) -> SettingOverrideError {
        SettingOverrideError(kind: .notBoolean, text: text, key: key, value: value)
    }

    /// What is wrong, in words a user can act on (a command puts the option and the text in
    /// front: `--set x=1: the policy "default" reads no setting "x" (it reads: alwaysDownloadOriginalImage)`):
    /// `expected key=value`; `the policy "NAME" reads no setting "KEY" (it reads: KEYS)`, `none`
    /// when it reads none; `"VALUE" is not a boolean (true/false, yes/no, on/off, 1/0)`.
    public var description: String {
        switch kind {
        case .malformed:
            return "expected key=value"
        case .unknownKey:
            let known = knownKeys.isEmpty ? "none" : knownKeys.joined(separator: ", ")
            return "the policy \"\(policyName ?? "")\" reads no setting \"\(key ?? "")\" (it reads: \(known))"
        default:
            return "\"\(value ?? "")\" is not a boolean (true/false, yes/no, on/off, 1/0)"
        }
    }
}
