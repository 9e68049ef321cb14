import Support
import Logging
import Policy

import HTTPSemantics

/// Images on disk, in a folder that several processes may share at once.
///
/// ```swift
/// let cache = try DiskCache(folder: DiskCache.defaultFolder(environment: env), logger: logger)
/// try cache.store(bytes, for: url)
/// cache.containsImage(at: url)        // from memory: no system call, hit or miss
/// let bytes = cache.image(for: url)   // nil: a miss, or a damaged entry (removed)
///
/// // With HTTP freshness, and after a 304:
/// try cache.store(bytes, for: url, freshness: HTTPFreshness(status: 200, headers: headers, receivedAt: .now()))
/// cache.storedImage(for: url)?.freshness.state(at: .now())   // .fresh, .stale…
/// try cache.revalidated(url, notModified: headersOf304, receivedAt: .now())   // same bytes, renewed freshness
/// ```
///
/// - **Its own files only.** A folder is a cache when it holds the marker `.imgpolicy-cache`
///   (written when an empty or new folder is opened; a non-empty folder without it is refused with
///   `.notACache` and left untouched, unless it holds strong evidence of an earlier version's
///   cache: see `DiskCacheFolder.claim()`). An empty folder where the marker cannot be written
///   (immutable, full disk) is an empty cache that is only read: answering needs no write. Inside it the cache reads and removes only names of its layout
///   (`DiskCacheFolder`), regular files, reached relative to the folder without following a
///   symbolic link; a FIFO or device under an entry's name is removed unopened and is a miss.
/// - **Entries.** File names are a 128-bit hash of the URL in 256 shards; each entry holds its
///   length, a checksum and its URL (`DiskCacheEntry`). A read checks all of it; anything else is
///   a miss, removed and logged. `body(of:for:)` parses a whole entry file.
/// - **Writes** go to a locked temporary file in `tmp/`, then `rename` over the entry: no reader
///   sees half a file. Files are created with `fileMode` (0600 unless configured). A failed write
///   throws a `DiskCacheError` naming the path, and is logged and counted (`counters`).
/// - **Temporaries** left by a killed writer are removed when the cache opens (only those no live
///   writer holds locked); those still held count against the capacity meanwhile.
/// - **Index.** The journal (`DiskCacheJournal`) holds what the folder has, the sizes and the
///   access order: opening reads one file, not one `stat` per entry; "is it cached?" is answered
///   from memory only, hit or miss; entries written by other processes become visible when the
///   journal's new records are read: by every store, and in the background after a miss, at most
///   `inspectionRefreshInterval` (100 ms) after the last read.
/// - **Capacity.** Past `capacity` bytes the least recently used entries (reads count as uses,
///   across restarts) are removed down to 90 %. A body larger than `largestEntry` is not stored.
/// - **HTTP freshness.** An entry stored with an `HTTPFreshness` keeps it in two checked slots
///   (`DiskCacheEntry`, format 2); a refresh after a 304 rewrites one slot in place, never the
///   body. Entries without one (format 1, as before) are fresh for the default lifetime from
///   their write time. `no-store` is never written. "Is it cached?" ignores freshness: a stale
///   entry is cached.
/// - **Partial bodies** of interrupted transfers live in `partial/`, bounded by `partialLimits`,
///   counted against the capacity and evicted before entries (`DiskCache+Partials.swift`).
///
/// Thread safety: every method may be called from any thread at once. Every method is synchronous
/// and may touch the disk, except `containsImage(at:)` and `statistics`, which answer from memory.
///
/// Its files, by role: this one opens the folder and sweeps it; `DiskCache+Reading.swift` answers
/// "is it cached?" and reads entries; `DiskCache+Writing.swift` stores, refreshes, removes and
/// evicts; `DiskCache+IndexUpkeep.swift` keeps the index in step with the journal;
/// `DiskCache+Partials.swift` keeps partial bodies.
///
/// In use: the `Fetch` guide “Caching and Data Accounting”.
public final class DiskCache: CacheInspecting {
    /// The folder.
    public let folder: String
    /// The most bytes kept (entry files, plus temporaries still being written by others).
    public let capacity: Int
    /// The largest entry file stored (header, URL and body); a larger body is not stored.
    public let largestEntry: Int
    /// The mode of the files the cache creates (0600 unless configured); folders get the
    /// matching search bits (0700).
    public let fileMode: UInt32
    /// How much of interrupted transfers is kept (see `savePartial(_:for:validator:totalLength:)`).
    public let partialLimits: PartialLimits

    /// What went wrong or was cleaned up since the cache was opened, in this process.
    public struct Counters: Sendable, Equatable {
        /// Entries (or temporaries, or the journal) that could not be written.
        public var writeFailures = 0
        /// Files that could not be removed.
        public var removalFailures = 0
        /// Damaged or foreign entries (and non-regular files under an entry's name) removed.
        public var damagedRemoved = 0
        /// Entries removed to stay within the capacity.
        public var evictions = 0
        /// Stale temporaries removed when the cache opened (or was cleared).
        public var temporariesSwept = 0
        /// Temporaries held by live writers when last swept, and their bytes (counted against the capacity).
        public var temporariesHeld = 0
        /// See `temporariesHeld`.
        public var temporaryBytesHeld = 0
        /// Bodies not stored because their entry would exceed `largestEntry`.
        public var oversizedSkipped = 0
        /// Responses not stored (or entries removed) because they forbid storing (`no-store`).
        public var refusedNoStore = 0
        /// Partial bodies removed: expired, torn, over their cap, evicted, or found not to be a
        /// regular file.
        public var partialsRemoved = 0
    }

    /// What `removeAll()` did.
    public struct ClearReport: Sendable, Equatable {
        /// Entries removed.
        public var removed: Int
        /// Stale temporaries removed.
        public var temporariesRemoved: Int
        /// Everything that could not be removed (or read), each naming its path.
        public var failures: [DiskCacheError]
    }

    /// One entry as `entries()` lists it.
    public struct ListedEntry: Sendable, Equatable {
        /// The URL the entry holds (read from its header).
        public var url: String
        /// The entry file's bytes: the header, the URL, the freshness slots and the image (what
        /// `capacity` counts).
        public var size: Int
        /// The image's bytes (the body) alone.
        public var imageBytes: Int

        /// An entry for `url` of `size` file bytes holding `imageBytes` of image.
        public init(url: String, size: Int, imageBytes: Int) {
            self.url = url
            self.size = size
            self.imageBytes = imageBytes
        }
    }

    /// What `store` did.
    public enum StoreOutcome: Sendable, Equatable {
        /// Written (and indexed).
        case stored
        /// Not written: the entry would be larger than `largestEntry`.
        case tooLarge
        /// Not written: the response forbids storing (`no-store`, or a status other than 200/203).
        case forbidden
    }

    let layout: DiskCacheFolder
    /// Why the folder is only read: it was empty and its marker could not be written (nil when
    /// it is written). Its journal is neither created nor rebuilt; stores fail naming the marker.
    let unwritable: DiskCacheError?
    /// Whether the folder is only read because its marker could not be written: nothing is
    /// created in it (no store, no partial body, no background journal work).
    var readOnly: Bool { unwritable != nil }
    // Opened to be looked at (`inspecting(folder:capacity:logger:)`): nothing is created, swept,
    // rebuilt or compacted; the journal is read, never written.
    let inspectOnly: Bool
    let journal: DiskCacheJournal
    let logger: Logger
    // Guards the index (what the folder holds, sizes, access order).
    let index = Locked(DiskCacheIndex())
    // Guards the counters.
    let counts = Locked(Counters())
    // Guards what this process knows of the partial bodies (`partial/`): sizes and ages.
    let partials = Locked(DiskCachePartials())
    // Guards when the journal was last read for changes, and the background read of it that a
    // miss of "is it cached?" starts (`refreshInBackgroundIfDue`).
    let refreshes = Locked(RefreshState())

    struct RefreshState {
        /// When the last read of the journal began.
        var lastRead = ContinuousClock.now
        /// A background read is under way.
        var running = false
        /// Reads of the journal so far.
        var reads = 0
        var interval = DiskCache.inspectionRefreshInterval
        /// Runs a background read (tests); nil: a detached thread.
        var runner: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    }

    /// The capacity a cache has unless it is given one: 512 MiB.
    public static let defaultCapacity = 512 << 20

    /// `$XDG_CACHE_HOME/imgpolicy`, else `~/.cache/imgpolicy`.
    public static func defaultFolder(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/imgpolicy" }
        return (environment["HOME"] ?? ".") + "/.cache/imgpolicy"
    }

    /// Opens (creating it if needed) the cache in `folder`: reads its journal and removes stale
    /// temporaries.
    ///
    /// - Parameters:
    ///   - folder: the cache's folder (see ``defaultFolder(environment:)``); created if missing.
    ///   - capacity: the most bytes kept (512 MiB by default).
    ///   - largestEntry: the largest entry stored (default and at most: `capacity`).
    ///   - fileMode: the mode of the files created (default 0600: only the user reads the cache).
    ///   - partialLimits: how much of interrupted transfers is kept (64 KiB at least, 8 MiB each,
    ///     32 MiB in all, for a day).
    ///   - logger: evictions, damaged entries removed, failed writes and removals.
    /// - Throws: `.openFailed` when the folder cannot be created or read; `.notACache` when it is
    ///   not empty and has no cache marker (nothing in it is read or removed then). An empty folder
    ///   that cannot be written is no error: it opens as an empty cache, only read.
    public convenience init(folder: String, capacity: Int = defaultCapacity, largestEntry: Int? = nil, fileMode: UInt32 = 0o600,
                            partialLimits: PartialLimits = .default, logger: Logger = .disabled) throws(DiskCacheError) {
        try self.init(folder: folder, capacity: capacity, largestEntry: largestEntry, fileMode: fileMode, partialLimits: partialLimits,
                      logger: logger, inspecting: false)
    }

    /// Opens the cache in `folder` to look at it only (what `imgpolicy cache stats|list` and
    /// `imgpolicy stats` do): nothing is created, written or removed, not the folder, its marker,
    /// `tmp/` or the journal; stale temporaries and expired partial bodies stay for the next cache
    /// that writes; a missing or damaged journal is made up for by listing the folder, in memory.
    /// An earlier version's cache is taken as it is, without its marker.
    ///
    /// Returns nil when `folder` does not exist or is empty: there is no cache, and no image in it.
    /// Use `entries()`, `statistics` and `containsImage(at:)`: they write nothing. Reading an image
    /// would record a use, and storing or removing writes: on such a cache they fail or do nothing
    /// on disk beyond what they must (the journal refuses every append).
    /// - Throws: `.notACache` for a folder that is not empty and has no marker (as `init`);
    ///   `.openFailed` when it cannot be opened or read.
    public static func inspecting(folder: String, capacity: Int = defaultCapacity, logger: Logger = .disabled) throws(DiskCacheError) -> DiskCache? {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw DiskCacheError(path: folder, message: "cannot open the cache folder: \(errnoText())", code: .openFailed)
        }
        let cache = try DiskCache(folder: folder, capacity: capacity, largestEntry: nil, fileMode: 0o600, partialLimits: .default,
                                  logger: logger, inspecting: true)
        return cache.readOnly ? nil : cache
    }

    private init(folder: String, capacity: Int, largestEntry: Int?, fileMode: UInt32, partialLimits: PartialLimits,
                 logger: Logger, inspecting: Bool) throws(DiskCacheError) {
        layout = try DiskCacheFolder(path: folder, fileMode: mode_t(fileMode & 0o7777), creating: !inspecting)
        let unwritable = try layout.claim(writingMarker: !inspecting)
        self.unwritable = unwritable
        inspectOnly = inspecting
        self.folder = layout.path
        self.capacity = max(0, capacity)
        self.largestEntry = min(max(0, largestEntry ?? capacity), max(0, capacity))
        self.fileMode = fileMode & 0o7777
        var limits = partialLimits
        limits.largest = min(limits.largest, self.largestEntry)
        self.partialLimits = limits
        self.logger = logger
        journal = DiskCacheJournal(folder: layout, readsOnly: inspecting)
        if let unwritable {
            if !inspecting {
                logger.info("disk cache: the folder is empty and cannot be written: used as an empty cache", metadata: ["path": "\(unwritable.path)", "error": "\(unwritable.message)"])
            }
            return
        }
        if inspecting {
            refresh()
            return
        }
        switch layout.openSubfolder(DiskCacheFolder.temporaryFolderName, create: true) {
        case .success(let fd): close(fd)
        case .failure(let error): logger.warning("disk cache: \(error.path): \(error.message)")
        }
        sweep()
        refresh()
        scanPartials()
        compactIfNeeded()
    }

    // MARK: - Opening and sweeping

    /// Removes stale temporaries: those no live writer holds.
    @discardableResult
    func sweep() -> (removed: Int, failures: [SystemError]) {
        let result = layout.sweepTemporaries()
        for failure in result.failures { reportRemovalFailure(failure) }
        count {
            $0.temporariesSwept += result.removed
            $0.temporariesHeld = result.held
            $0.temporaryBytesHeld = result.heldBytes
        }
        if result.removed > 0 {
            logger.info("disk cache: removed stale temporary files", metadata: ["folder": "\(folder)/tmp", "count": "\(result.removed)"])
        }
        return (result.removed, result.failures)
    }

    func reportRemovalFailure(_ failure: SystemError) {
        count { $0.removalFailures += 1 }
        logger.error("disk cache: cannot remove", metadata: ["path": "\(failure.path)", "error": "\(failure.message)"])
    }

    func count(_ change: (inout Counters) -> Void) {
        counts.withLock(change)
    }
}
