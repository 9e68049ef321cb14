/// One boolean setting that a rule condition or a policy case reads, and the value it wants.
/// Kept in arrays sorted by key instead of a `[String: Bool]`, so that loading a policy makes
/// no dictionary keyed by `String` (docs/startup.md).
struct SettingRequirement: Sendable, Hashable {
    /// The setting's key.
    let key: String
    /// The value wanted: on (`true`) or off (`false`).
    var wanted: Bool
}

extension Array where Element == SettingRequirement {
    /// Requirements sorted by key, from a dictionary.
    init(sortedFrom values: [String: Bool]) {
        self = values.map { SettingRequirement(key: $0.key, wanted: $0.value) }.sorted { $0.key < $1.key }
    }

    /// The requirements as a dictionary by key.
    var dictionary: [String: Bool] {
        Dictionary(uniqueKeysWithValues: map { ($0.key, $0.wanted) })
    }

    /// Sets the requirement on `key` (replacing an earlier one), keeping the order by key.
    mutating func set(_ key: String, _ wanted: Bool) {
        let position = firstIndex { $0.key >= key } ?? count
        if position < count, self[position].key == key {
            self[position].wanted = wanted
        } else {
            insert(SettingRequirement(key: key, wanted: wanted), at: position)
        }
    }
}
