import Support
/// A UserDefaults-like key-value store for user settings, such as
/// `alwaysDownloadOriginalImage`.
///
/// Implementations: `InMemorySettingsStore` (also the test double), `FileSettingsStore` (a JSON
/// file shared safely between processes) and, in the `PolicyUserDefaults` module,
/// `UserDefaultsSettingsStore`.
///
/// Unlike `UserDefaults.bool(forKey:)`, a typed read never turns a value of the wrong type into a
/// silent `false`: it throws a `DataFileError` with code `.wrongType` naming the store and the key.
///
/// Thread safety: implementations must be safe to call from any thread at once.
///
/// ```swift
/// let store = FileSettingsStore(path: FileSettingsStore.defaultPath())
/// store.register(defaults: ["alwaysDownloadOriginalImage": .bool(false)])
/// try store.set(.bool(true), forKey: "alwaysDownloadOriginalImage")
/// let on = try store.bool(forKey: "alwaysDownloadOriginalImage")   // Optional(true)
/// ```
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public protocol SettingsStore: Sendable {
    /// Where the values live, for messages: a file path, `in-memory settings`.
    var location: String { get }

    /// The value stored under `key`, ignoring registered defaults; nil when none is stored.
    func storedValue(forKey key: String) throws(DataFileError) -> SettingValue?

    /// Stores `value` under `key`.
    func set(_ value: SettingValue, forKey key: String) throws(DataFileError)

    /// Removes the value stored under `key`, if any.
    func removeValue(forKey key: String) throws(DataFileError)

    /// Every stored value, by key; registered defaults are not included.
    func storedValues() throws(DataFileError) -> [String: SettingValue]

    /// Adds `defaults` to the values used when nothing is stored (as `UserDefaults.register`).
    func register(defaults: [String: SettingValue])

    /// The defaults registered so far.
    var registeredDefaults: [String: SettingValue] { get }

    /// The default registered for `key`, if any (by default, `registeredDefaults[key]`; a store
    /// can answer without copying the whole dictionary).
    func registeredDefault(forKey key: String) -> SettingValue?

    /// The line of `key`'s value in the backing file, for error messages; nil when the store has
    /// no file or no line for it (the default).
    func sourceLine(forKey key: String) -> Int?
}

extension SettingsStore {
    /// No line: the store is not a file.
    public func sourceLine(forKey key: String) -> Int? { nil }

    /// `registeredDefaults[key]`.
    public func registeredDefault(forKey key: String) -> SettingValue? { registeredDefaults[key] }

    /// The stored value for `key`, else its registered default, else nil.
    public func value(forKey key: String) throws(DataFileError) -> SettingValue? {
        try storedValue(forKey: key) ?? registeredDefault(forKey: key)
    }

    /// The boolean under `key` (stored, else registered default); nil when there is neither.
    /// - Throws: `.wrongType` when the value is not a boolean.
    public func bool(forKey key: String) throws(DataFileError) -> Bool? {
        switch try value(forKey: key) {
        case nil: return nil
        case .bool(let flag)?: return flag
        case let other?: throw wrongType(key, other, expected: "a boolean")
        }
    }

    /// The integer under `key`; nil when there is none. A double with no fraction counts.
    /// - Throws: `.wrongType` when the value is not a whole number.
    public func integer(forKey key: String) throws(DataFileError) -> Int? {
        switch try value(forKey: key) {
        case nil: return nil
        case .integer(let number)?: return number
        case .double(let number)? where number.rounded() == number && abs(number) < 9e15: return Int(number)
        case let other?: throw wrongType(key, other, expected: "an integer")
        }
    }

    /// The number under `key`; nil when there is none.
    /// - Throws: `.wrongType` when the value is not a number.
    public func double(forKey key: String) throws(DataFileError) -> Double? {
        switch try value(forKey: key) {
        case nil: return nil
        case .double(let number)?: return number
        case .integer(let number)?: return Double(number)
        case let other?: throw wrongType(key, other, expected: "a number")
        }
    }

    /// The string under `key`; nil when there is none.
    /// - Throws: `.wrongType` when the value is not a string.
    public func string(forKey key: String) throws(DataFileError) -> String? {
        switch try value(forKey: key) {
        case nil: return nil
        case .string(let text)?: return text
        case let other?: throw wrongType(key, other, expected: "a string")
        }
    }

    func wrongType(_ key: String, _ value: SettingValue, expected: String) -> DataFileError {
        DataFileError(.wrongType, source: location, line: sourceLine(forKey: key),
                      message: "\"\(key)\" holds \(value.typeDescription), expected \(expected)")
    }
}
