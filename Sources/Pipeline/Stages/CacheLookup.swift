import Support
import Policy
import Caching
import HTTPSemantics

/// The pipeline's stage that looks in the caches: memory first, then the disk cache, read on the
/// disk threads (never on the cooperative pool). A disk hit is copied into memory unless it must be
/// revalidated before it is shown (else the memory hit would skip that). "Is it cached?" asks
/// the memory cache and the disk cache's index, with no system call.
///
/// Thread safety: every member may be used from any thread at once.
final class CacheLookup: Sendable {
    let memory: MemoryCache
    let disk: DiskCache?
    /// The threads disk reads run on.
    let readers: BlockingWorkPool
    let http: HTTPOptions

    init(memory: MemoryCache, disk: DiskCache?, readers: BlockingWorkPool, http: HTTPOptions) {
        self.memory = memory
        self.disk = disk
        self.readers = readers
        self.http = http
    }

    /// Whether `url` is in the memory cache or the disk cache's index, from memory.
    func contains(_ url: ImageURL) -> Bool {
        memory.containsImage(at: url) || (disk?.containsImage(at: url) ?? false)
    }

    /// The image at `url` if the memory cache has it.
    func memoryHit(_ url: ImageURL) -> FetchedImage? {
        memory.image(for: url).map { FetchedImage(url: url, bytes: $0, source: .memory) }
    }

    /// Whether the disk cache's index holds `url`. Before a miss sends the load to the network,
    /// the journal is read on a disk thread when the last read is older than
    /// `DiskCache.inspectionRefreshInterval`, so that what another process stored meanwhile is
    /// read rather than downloaded again (`contains(_:)` itself never touches the disk).
    func diskHolds(_ url: ImageURL) async -> Bool {
        guard let disk else { return false }
        if disk.indexHolds(url) { return true }
        guard disk.refreshIsDue else { return false }
        return await readers.run {
            disk.refreshIfDue()
            return disk.indexHolds(url)
        }
    }

    /// The stored image for `url` read on a disk thread, or nil (a damaged entry is removed and
    /// is a miss). It is kept in memory unless it must be revalidated before it is shown.
    func storedImage(for url: ImageURL) async -> StoredImage? {
        guard let disk else { return nil }
        guard let stored = await readers.run({ disk.storedImage(for: url) }) else { return nil }
        if freshness(of: stored) != .mustRevalidate {
            memory.store(stored.bytes, for: url)
        }
        return stored
    }

    /// How fresh `stored` is now, by `http`'s clock and rules.
    func freshness(of stored: StoredImage) -> HTTPFreshness.State {
        stored.freshness.state(at: http.clock(), rules: http.freshnessRules)
    }
}

extension StoredImage {
    /// These bytes as a disk hit for `url`.
    func image(_ url: ImageURL) -> FetchedImage {
        FetchedImage(url: url, bytes: bytes, source: .disk)
    }
}
