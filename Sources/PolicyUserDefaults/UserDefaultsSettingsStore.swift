import Foundation
import Policy
import Support

/// A `SettingsStore` over Foundation's `UserDefaults`: for apps that already keep their settings
/// there (as the SDWebImage article kept `alwaysDownloadOriginalImage` in `NSUserDefaults`).
///
/// Stored values are those of one persistent domain (the suite); registered defaults are
/// `UserDefaults`' own registration domain. Typed reads are strict: a string stored where a
/// boolean is read throws `.wrongType` instead of `UserDefaults.bool(forKey:)`'s silent `false`.
///
/// ```swift
/// let store = UserDefaultsSettingsStore(suiteName: "com.example.app")!
/// let decision = try ImagePolicy.default.decide(item, network: state, settings: store, cache: cache)
/// ```
public final class UserDefaultsSettingsStore: SettingsStore, @unchecked Sendable {
    // `UserDefaults` is documented as thread-safe; both properties are constants.
    private let defaults: UserDefaults
    private let domain: String
    // Guards the registered defaults (kept here: Foundation on Linux does not list its
    // registration domain).
    private let registered = Locked<[String: SettingValue]>([:])

    /// A store over `UserDefaults(suiteName:)`; nil when Foundation refuses the name.
    public convenience init?(suiteName: String) {
        guard let defaults = UserDefaults(suiteName: suiteName) else { return nil }
        self.init(defaults, domain: suiteName)
    }

    /// A store over `defaults`, whose values live in the persistent domain `domain` (the suite
    /// name, or the app's bundle identifier for `UserDefaults.standard`).
    public init(_ defaults: UserDefaults, domain: String) {
        self.defaults = defaults
        self.domain = domain
    }

    /// Where the values live, for messages.
    public var location: String { "UserDefaults(\(domain))" }

    /// The value stored under `key`, ignoring registered defaults.
    public func storedValue(forKey key: String) throws(DataFileError) -> SettingValue? {
        try storedDictionary()[key].map { object throws(DataFileError) in try settingValue(object, key: key) }
    }

    /// Stores `value` under `key`.
    public func set(_ value: SettingValue, forKey key: String) throws(DataFileError) {
        switch value {
        case .bool(let flag): defaults.set(flag, forKey: key)
        case .integer(let number): defaults.set(number, forKey: key)
        case .double(let number): defaults.set(number, forKey: key)
        case .string(let text): defaults.set(text, forKey: key)
        case .json(let json):
            throw DataFileError(.invalid, source: location, message: "\"\(key)\": \(json.typeDescription) cannot be stored in UserDefaults")
        }
    }

    /// Removes the value stored under `key`.
    public func removeValue(forKey key: String) throws(DataFileError) {
        defaults.removeObject(forKey: key)
    }

    /// Every stored value, without registered defaults.
    public func storedValues() throws(DataFileError) -> [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        for (key, object) in storedDictionary() { values[key] = try settingValue(object, key: key) }
        return values
    }

    /// Adds values used when nothing is stored.
    public func register(defaults values: [String: SettingValue]) {
        registered.withLock { $0.merge(values) { _, new in new } }
    }

    /// The defaults registered so far.
    public var registeredDefaults: [String: SettingValue] {
        registered.withLock { $0 }
    }

    private func storedDictionary() -> [String: Any] {
        defaults.persistentDomain(forName: domain) ?? [:]
    }

    private func settingValue(_ object: Any, key: String) throws(DataFileError) -> SettingValue {
        if let number = object as? NSNumber {
            // A boolean NSNumber has the C type `char`; 0 or 1 stored as numbers stay numbers.
            switch String(cString: number.objCType) {
            case "c", "B": return .bool(number.boolValue)
            case "f", "d": return .double(number.doubleValue)
            default: return .integer(number.intValue)
            }
        }
        if let text = object as? String { return .string(text) }
        if let flag = object as? Bool { return .bool(flag) }
        throw DataFileError(.wrongType, source: location, message: "\"\(key)\" holds a \(type(of: object)), which is not a setting value")
    }
}
