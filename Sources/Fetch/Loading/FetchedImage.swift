import Policy

/// An image's bytes and where they came from.
///
/// ## See Also
///
/// - <doc:CachingAndDataAccounting>
public struct FetchedImage: Sendable, Hashable {
    /// Where the bytes came from.
    public enum Source: String, Sendable, Hashable {
        /// The memory cache.
        case memory
        /// The disk cache.
        case disk
        /// A download.
        case network
    }

    /// The URL.
    public var url: ImageURL
    /// The image file's bytes.
    public var bytes: [UInt8]
    /// Where they came from.
    public var source: Source

    /// Creates a result.
    public init(url: ImageURL, bytes: [UInt8], source: Source) {
        self.url = url
        self.bytes = bytes
        self.source = source
    }
}
