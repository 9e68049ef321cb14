import Support

/// A settings store that lives in memory only: for tests, previews and `--set` overrides.
public final class InMemorySettingsStore: SettingsStore {
    private struct State {
        var values: [String: SettingValue]
        var defaults: [String: SettingValue] = [:]
    }

    private let state: Locked<State>

    /// Creates a store holding `values`.
    public init(_ values: [String: SettingValue] = [:]) {
        state = Locked(State(values: values))
    }

    /// Where the values live, for messages.
    public var location: String { "in-memory settings" }

    /// The value stored under `key`, ignoring registered defaults.
    public func storedValue(forKey key: String) throws(DataFileError) -> SettingValue? {
        state.withLock { $0.values[key] }
    }

    /// Stores `value` under `key`.
    public func set(_ value: SettingValue, forKey key: String) throws(DataFileError) {
        state.withLock { $0.values[key] = value }
    }

    /// Removes the value stored under `key`.
    public func removeValue(forKey key: String) throws(DataFileError) {
        _ = state.withLock { $0.values.removeValue(forKey: key) }
    }

    /// Every stored value, without registered defaults.
    public func storedValues() throws(DataFileError) -> [String: SettingValue] {
        state.withLock { $0.values }
    }

    /// Adds values used when nothing is stored.
    public func register(defaults: [String: SettingValue]) {
        state.withLock { $0.defaults.merge(defaults) { _, new in new } }
    }

    /// The defaults registered so far.
    public var registeredDefaults: [String: SettingValue] {
        state.withLock { $0.defaults }
    }
}
