import Fetch
import Logging
import Policy
import Support

/// Turns the byte pipeline's images into pixels at a display size: the `PixelCache` first (keyed
/// by URL and size), else a decode on the `DecodingQueue`, whose result fills the cache.
///
/// Cancellable: when the calling task is cancelled, `image(for:at:)` throws `DecodingError` of
/// kind `.cancelled` at once and never returns the image (a decode already running finishes on
/// its thread and is dropped, not cached).
///
/// ```swift
/// let pixels = PixelLoader(queue: DecodingQueue(), cache: PixelCache(costLimit: 64 << 20))
/// let fetched = try await pipeline.image(for: url)                      // Fetch: the bytes
/// let image = try await pixels.image(for: fetched, at: TargetSize(width: 600, height: 400))
/// ```
///
/// Thread safety: every method may be called from any thread or task at once.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public struct PixelLoader: Sendable {
    /// Where decodes run.
    public let queue: DecodingQueue
    /// Where decoded images are kept.
    public let cache: PixelCache
    private let logger: Logger

    /// Creates a loader decoding on `queue` and keeping its images in `cache`.
    public init(queue: DecodingQueue = DecodingQueue(), cache: PixelCache = PixelCache(), logger: Logger = .disabled) {
        self.queue = queue
        self.cache = cache
        self.logger = logger
    }

    /// The image at `url` decoded to `size`, if the cache holds it (no decode).
    public func cachedImage(for url: ImageURL, at size: TargetSize?) -> DecodedImage? {
        cache.image(for: PixelCache.Key(url: url.absoluteString, size: size))
    }

    /// `fetched` decoded and downsampled to `size` (nil: full size), from the cache or decoded now.
    /// - Throws: `DecodingError`: the bytes do not decode, or `.cancelled` when the task is cancelled.
    public func image(for fetched: FetchedImage, at size: TargetSize?) async throws(DecodingError) -> DecodedImage {
        let key = PixelCache.Key(url: fetched.url.absoluteString, size: size)
        if let image = cache.image(for: key) { return image }
        if Task.isCancelled { throw DecodingError(kind: .cancelled) }
        let image = try await queue.decode(fetched.bytes, to: size)
        if Task.isCancelled { throw DecodingError(kind: .cancelled) }
        cache.insert(image, for: key)
        return image
    }
}
