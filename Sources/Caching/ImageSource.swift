/// Where an image's bytes came from: the memory cache, the disk cache, or a download. What a
/// load reports (`FetchedImage.source`) and what the data usage counts by.
public enum ImageSource: String, Sendable, Hashable {
    /// The memory cache.
    case memory
    /// The disk cache.
    case disk
    /// A download.
    case network
}
