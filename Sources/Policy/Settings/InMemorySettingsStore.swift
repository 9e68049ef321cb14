import Synchronization

/// A settings store that lives in memory only: for tests, previews and `--set` overrides.
public final class InMemorySettingsStore: SettingsStore {
    private struct State {
        var values: [String: SettingValue]
        var defaults: [String: SettingValue] = [:]
    }

    private let state: Mutex<State>

    /// Creates a store holding `values`.
    public init(_ values: [String: SettingValue] = [:]) {
        state = Mutex(State(values: values))
    }

    public var location: String { "in-memory settings" }

    public func storedValue(forKey key: String) throws(DataFileError) -> SettingValue? {
        state.withLock { $0.values[key] }
    }

    public func set(_ value: SettingValue, forKey key: String) throws(DataFileError) {
        state.withLock { $0.values[key] = value }
    }

    public func removeValue(forKey key: String) throws(DataFileError) {
        _ = state.withLock { $0.values.removeValue(forKey: key) }
    }

    public func storedValues() throws(DataFileError) -> [String: SettingValue] {
        state.withLock { $0.values }
    }

    public func register(defaults: [String: SettingValue]) {
        state.withLock { $0.defaults.merge(defaults) { _, new in new } }
    }

    public var registeredDefaults: [String: SettingValue] {
        state.withLock { $0.defaults }
    }
}
