import HTTPSemantics
/// The partial bodies a cache holds, as this process last saw them: each one's size and
/// modification time, for the capacity and the eviction (oldest first).
struct DiskCachePartials {
    struct Partial {
        var size: Int
        var modified: Int64
    }

    var byKey: [Hash128: Partial] = [:]

    /// Bytes of all partial files.
    var bytes: Int { byKey.values.reduce(0) { $0 + $1.size } }

    /// Keys, oldest first.
    var oldestFirst: [Hash128] {
        byKey.sorted { ($0.value.modified, $0.key.high, $0.key.low) < ($1.value.modified, $1.key.high, $1.key.low) }.map(\.key)
    }
}
