/// A `CacheInspecting` whose answers are fixed when it is made: the test double, and what the
/// `imgpolicy --cached` flag uses.
///
/// ```swift
/// let cache = StaticCacheContents(urls: [item.original])     // these exact URLs are cached
/// let assumed = StaticCacheContents(assuming: .thumbnail)     // every item's thumbnail is cached
/// ```
public struct StaticCacheContents: CacheInspecting {
    private let urls: Set<ImageURL>
    private let assumedVariants: CachedVariants

    /// A cache that holds exactly `urls`.
    public init(urls: Set<ImageURL> = []) {
        self.urls = urls
        self.assumedVariants = []
    }

    /// A cache that holds `variants` of every item, whatever their URLs.
    ///
    /// Use it through `cachedVariants(of:)`: `containsImage(at:)` cannot tell which variant a
    /// lone URL is, and answers from `urls` only.
    public init(assuming variants: CachedVariants, urls: Set<ImageURL> = []) {
        self.urls = urls
        self.assumedVariants = variants
    }

    /// An empty cache.
    public static let empty = StaticCacheContents()

    /// Whether `url` is one of `urls`.
    public func containsImage(at url: ImageURL) -> Bool { urls.contains(url) }

    /// The variants of `item` that are among `urls` or assumed cached.
    public func cachedVariants(of item: ImageItem) -> CachedVariants {
        var variants = assumedVariants
        if item.thumbnail == nil { variants.remove(.thumbnail) }
        if urls.contains(item.original) { variants.insert(.original) }
        if let thumbnail = item.thumbnail, urls.contains(thumbnail) { variants.insert(.thumbnail) }
        return variants
    }

    /// The rungs of `item` that are among `urls`, with the original's and the thumbnail's rungs
    /// when those variants are assumed cached.
    public func cachedRungs(of item: ImageItem) -> CachedRungs {
        var rungs = CachedRungs(of: item, cachedVariants: assumedVariants)
        rungs.bits |= CachedRungs(of: item, in: self).bits
        return rungs
    }
}
