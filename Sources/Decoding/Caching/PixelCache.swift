import Support
import Logging

/// A memory cache of decoded images keyed by URL and size, limited by the bytes of their pixels
/// (width × height × 4): the least recently used images are evicted first. It sits beside the
/// byte cache (`Fetch`'s memory cache), which keeps the encoded bytes.
///
/// Linux sends no memory warning to a process: call `purge()` (or `trim(toCost:)`) when the app
/// learns of memory pressure (GTK's or SDL's low-memory event), or let a `MemoryPressureWatch`
/// poll the available memory (the cgroup's limit, else `/proc/meminfo`) and trim the cache when
/// it runs low.
///
/// Thread safety: every method may be called from any thread or task at once.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public final class PixelCache: Sendable {
    /// An image's identity: its URL and the size it was decoded to (nil: full size).
    public struct Key: Sendable, Hashable {
        /// The image's URL.
        public var url: String
        /// The size it was decoded to.
        public var size: TargetSize?
        /// Creates a key.
        public init(url: String, size: TargetSize?) {
            self.url = url
            self.size = size
        }
    }

    /// The most pixel bytes the cache holds.
    public let costLimit: Int

    private struct Entry {
        var image: DecodedImage
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var cost = 0
        var clock: UInt64 = 0
    }

    private let state = Locked(State())
    private let logger: Logger

    /// A cache of at most `costLimit` bytes of pixels (default 64 MiB: about 50 images of 600×500).
    public init(costLimit: Int = 64 << 20, logger: Logger = .disabled) {
        self.costLimit = max(0, costLimit)
        self.logger = logger
    }

    /// The image stored for `key`, marked as just used.
    public func image(for key: Key) -> DecodedImage? {
        state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock &+= 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.image
        }
    }

    /// Stores `image` for `key`, evicting the least recently used images past the limit. An image
    /// larger than the whole limit is not stored.
    public func insert(_ image: DecodedImage, for key: Key) {
        let cost = image.byteCount
        guard cost <= costLimit else {
            logger.debug("image larger than the pixel cache, not stored", metadata: ["url": "\(key.url)", "bytes": "\(cost)"])
            return
        }
        let evicted: [Key] = state.withLock { state in
            state.clock &+= 1
            if let old = state.entries.updateValue(Entry(image: image, lastUse: state.clock), forKey: key) {
                state.cost -= old.image.byteCount
            }
            state.cost += cost
            var evicted: [Key] = []
            while state.cost > costLimit,
                  let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.cost -= oldest.value.image.byteCount
                evicted.append(oldest.key)
            }
            return evicted
        }
        for key in evicted {
            logger.debug("evicted from the pixel cache", metadata: ["url": "\(key.url)", "size": "\(key.size.map { "\($0)" } ?? "full")"])
        }
    }

    /// Removes the image stored for `key`.
    public func removeImage(for key: Key) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.cost -= old.image.byteCount }
        }
    }

    /// Evicts the least recently used images until at most `cost` pixel bytes remain (on
    /// moderate memory pressure: `trim(toCost: cache.totalCost / 2)`).
    public func trim(toCost cost: Int) {
        let removed = state.withLock { state -> (Int, Int) in
            let (count, before) = (state.entries.count, state.cost)
            if state.cost > max(0, cost) {
                for (key, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                    guard state.cost > max(0, cost) else { break }
                    state.entries[key] = nil
                    state.cost -= entry.image.byteCount
                }
            }
            return (count - state.entries.count, before - state.cost)
        }
        if removed.0 > 0 {
            logger.info("pixel cache trimmed", metadata: ["images": "\(removed.0)", "bytes": "\(removed.1)"])
        }
    }

    /// Empties the cache (on memory pressure).
    public func purge() {
        let removed = state.withLock { state in
            defer { state.entries.removeAll(); state.cost = 0 }
            return (state.entries.count, state.cost)
        }
        if removed.0 > 0 {
            logger.info("pixel cache purged", metadata: ["images": "\(removed.0)", "bytes": "\(removed.1)"])
        }
    }

    /// The pixel bytes held now.
    public var totalCost: Int { state.withLock { $0.cost } }

    /// The number of images held now.
    public var count: Int { state.withLock { $0.entries.count } }
}
