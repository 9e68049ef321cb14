import HTTPSemantics
/// An image read from the disk cache with its HTTP freshness.
///
/// ```swift
/// if let stored = disk.storedImage(for: url) {
///     show(stored.bytes)                                   // stale or not: it is an image
///     if stored.freshness.state(at: .now()) != .fresh {    // revalidate: If-None-Match / If-Modified-Since
///         request.headers += stored.freshness.conditionalHeaders
///     }
/// }
/// ```
public struct StoredImage: Sendable, Equatable {
    /// The body, byte for byte as stored.
    public var bytes: [UInt8]
    /// Its validators and freshness (for an entry without a freshness record: none, received
    /// when the entry was written).
    public var freshness: HTTPFreshness
    /// False for an entry written before entries kept their freshness (format 1).
    public var hasFreshnessRecord: Bool

    /// An image and its freshness.
    public init(bytes: [UInt8], freshness: HTTPFreshness, hasFreshnessRecord: Bool = true) {
        self.bytes = bytes
        self.freshness = freshness
        self.hasFreshnessRecord = hasFreshnessRecord
    }
}
