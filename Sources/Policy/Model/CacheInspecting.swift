/// Answers "is this image cached?" for the policy. The fetcher's caches conform; so does
/// `StaticCacheContents`, the test double.
///
/// Thread safety: implementations must be safe to call from any thread at once. The call sits on
/// the path of every decision, so it must be cheap: answer from memory, never touch the disk or the
/// network.
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public protocol CacheInspecting: Sendable {
    /// Whether the image at `url` can be shown right now without a download.
    func containsImage(at url: ImageURL) -> Bool

    /// Which variants of `item` are cached. A default implementation asks `containsImage(at:)`
    /// for each URL the item has.
    func cachedVariants(of item: ImageItem) -> CachedVariants

    /// Which rungs of `item`'s ladder are cached (its thumbnail and original for an item without
    /// one), for policies that choose rungs. A default implementation asks `containsImage(at:)`
    /// for each rung's URL.
    func cachedRungs(of item: ImageItem) -> CachedRungs
}

extension CacheInspecting {
    /// Asks `containsImage(at:)` for each of the item's URLs. A thumbnail the item does not have is
    /// never cached.
    public func cachedVariants(of item: ImageItem) -> CachedVariants {
        var variants: CachedVariants = []
        if containsImage(at: item.original) { variants.insert(.original) }
        if let thumbnail = item.thumbnail, containsImage(at: thumbnail) { variants.insert(.thumbnail) }
        return variants
    }

    /// Asks `containsImage(at:)` for each rung's URL.
    public func cachedRungs(of item: ImageItem) -> CachedRungs {
        CachedRungs(of: item, in: self)
    }
}
