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
    private let unwritable: DiskCacheError?
    /// Whether the folder is only read because its marker could not be written: nothing is
    /// created in it (no store, no partial body, no background journal work).
    var readOnly: Bool { unwritable != nil }
    // Opened to be looked at (`inspecting(folder:capacity:logger:)`): nothing is created, swept,
    // rebuilt or compacted; the journal is read, never written.
    private let inspectOnly: Bool
    private let journal: DiskCacheJournal
    let logger: Logger
    // Guards the index (what the folder holds, sizes, access order).
    let index = Locked(DiskCacheIndex())
    // Guards the counters.
    let counts = Locked(Counters())
    // Guards what this process knows of the partial bodies (`partial/`): sizes and ages.
    let partials = Locked(DiskCachePartials())
    // Guards when the journal was last read for changes, and the background read of it that a
    // miss of "is it cached?" starts (`refreshInBackgroundIfDue`).
    private let refreshes = Locked(RefreshState())

    private struct RefreshState {
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

    // MARK: - Queries

    /// Whether an entry for `url` is in the index, answered from memory: no system call, hit or
    /// miss, on the caller's thread (the policy asks once per row in view, from the cooperative
    /// pool or the app's thread). One exception: until the journal's table has been read into
    /// memory (a pipeline starts that read when it is made: milliseconds; a process that only
    /// looks, such as a decision, never pays for it), a lookup reads its key's probe run from the
    /// file (one `pread` of 2 KiB, see `DiskCacheIndex`).
    ///
    /// The index follows the journal by other means: every store reads it first, the pipeline
    /// reads it on a disk thread before it downloads what the index misses (`refreshIfDue()`), and
    /// a read (`storedImage(for:)`) looks at the entry's file itself; and a miss here starts
    /// a read of what other processes appended, on a thread of its own, when the last read began
    /// more than `inspectionRefreshInterval` ago. So an entry another process stored is "cached"
    /// for every ask after that read: within `inspectionRefreshInterval` plus one read of the
    /// journal's new records while someone keeps asking (docs/disk-cache.md, "Index, access order,
    /// capacity").
    public func containsImage(at url: ImageURL) -> Bool {
        let key = Hash128(of: url.absoluteString)
        let (found, lazy) = index.withLock { ($0.contains(key), $0.isLazy) }
        // A table still in the file is read into memory on that thread too (until then, a lookup
        // reads its probe run: one `pread`).
        if !found || lazy { refreshInBackgroundIfDue() }
        return found
    }

    /// Whether the index holds `url`, from memory, starting no background read of the journal
    /// (for callers that read it themselves: `refreshIfDue()`).
    package func indexHolds(_ url: ImageURL) -> Bool {
        let key = Hash128(of: url.absoluteString)
        return index.withLock { $0.contains(key) }
    }

    /// The longest time "is it cached?" goes on answering a miss from an index that has not read
    /// the journal, while it is being asked: 100 ms. An entry stored by another process becomes
    /// visible to `containsImage(at:)` at most this long (plus one read of the journal's new
    /// records, on a background thread) after it was stored.
    public static let inspectionRefreshInterval: Duration = .milliseconds(100)

    /// Whether the journal was last read more than the refresh interval ago (memory only): the
    /// pipeline then reads it on a disk thread (`refreshIfDue()`) before it takes a miss for one.
    package var refreshIsDue: Bool {
        let now = ContinuousClock.now
        return refreshes.withLock { now - $0.lastRead >= $0.interval }
    }

    /// Reads what other processes appended to the journal when the last read began more than the
    /// refresh interval ago. It touches the disk: call it where blocking is allowed (the
    /// pipeline's disk threads).
    package func refreshIfDue() {
        guard refreshIsDue else { return }
        refresh()
        materializeIndex()
    }

    /// Reads and checks the journal's table when the index still leaves it in the file (see
    /// `DiskCacheIndex`): outside the index's lock, so that lookups meanwhile answer from the
    /// file; the records applied meanwhile are applied to the copy before it is swapped in.
    /// Where blocking is allowed: the background read, the pipeline's disk threads.
    func materializeIndex() {
        guard let (snapshot, state) = index.withLock({ index in index.lazyState.map { (index, $0) } }) else { return }
        var copy = snapshot
        copy.materialize()
        index.withLock { _ = $0.adopt(copy, of: state.table, keeping: state.kept) }
    }

    /// Reads the journal's table into memory on a thread of its own when the index still leaves
    /// it in the file: a long-lived owner (the pipeline) calls it once, when it starts, so that
    /// "is it cached?" answers from memory within milliseconds of the open instead of reading
    /// each lookup's probe run from the file until its first background read of the journal.
    package func readIndexInBackground() {
        guard indexIsLazy else { return }
        do {
            try OwnedThread.detached { [self] in materializeIndex() }
        } catch {
            // No thread now: lookups go on reading their probe runs until a store or a background read.
            logger.debug("disk cache: cannot start a thread to read the journal's table", metadata: ["code": "\(error.code)"])
        }
    }

    /// How "is it cached?" keeps the index current, for tests: `interval` replaces
    /// `inspectionRefreshInterval`, and `runner` runs each background read of the journal instead of
    /// a thread of its own (it may run it later, or never; nil: a thread of its own).
    package func setBackgroundRefresh(interval: Duration, runner: (@Sendable (@escaping @Sendable () -> Void) -> Void)?) {
        refreshes.withLock {
            $0.interval = interval
            $0.runner = runner
        }
    }

    /// Whether the index is still the journal's table left in the file and checked lazily, not
    /// yet read into memory
    /// (for tests and benchmarks: see `DiskCacheIndex`).
    package var indexIsLazy: Bool { index.withLock { $0.isLazy } }

    /// Times the journal was read for changes (`refresh()`): for tests that prove a path touches no file.
    package var journalReads: Int { refreshes.withLock { $0.reads } }

    /// Starts a read of the journal on a thread of its own when one is due and none is running.
    private func refreshInBackgroundIfDue() {
        let now = ContinuousClock.now
        let (due, runner) = refreshes.withLock { state -> (Bool, (@Sendable (@escaping @Sendable () -> Void) -> Void)?) in
            guard !readOnly, !state.running, now - state.lastRead >= state.interval else { return (false, nil) }
            state.running = true
            return (true, state.runner)
        }
        guard due else { return }
        let work: @Sendable () -> Void = { [self] in
            refresh()
            materializeIndex()
            refreshes.withLock { $0.running = false }
        }
        if let runner { return runner(work) }
        do {
            try OwnedThread.detached(work)
        } catch {
            // No thread now: the next due miss tries again (stores and reads still read the journal).
            refreshes.withLock { $0.running = false }
            logger.debug("disk cache: cannot start a thread to read the journal", metadata: ["code": "\(error.code)"])
        }
    }

    /// What a disk cache holds: entries, or partial bodies, and their bytes.
    public struct Holdings: Sendable, Equatable {
        /// How many.
        public var count: Int
        /// Their bytes in all.
        public var bytes: Int

        /// Creates a read-out.
        public init(count: Int, bytes: Int) {
            self.count = count
            self.bytes = bytes
        }
    }

    /// Entries and bytes in the index.
    public var statistics: Holdings {
        index.withLock { Holdings(count: $0.count, bytes: $0.totalBytes) }
    }

    /// Failures and clean-ups so far (see `Counters`).
    public var counters: Counters { counts.withLock { $0 } }

    // MARK: - Reading

    /// The image stored for `url`, or nil when there is none or it is damaged (then it is removed
    /// and logged). Never blocks on a FIFO or device put in an entry's place (it is removed).
    /// Marks the entry as used, in the journal (kept in memory and appended with the next 63 uses,
    /// the next store or removal, or when the cache is released). A stale entry is returned all the same: see
    /// `storedImage(for:)` for its freshness.
    public func image(for url: ImageURL) -> [UInt8]? {
        storedImage(for: url)?.bytes
    }

    /// The image stored for `url` with its HTTP freshness, or nil as `image(for:)`. An entry
    /// written before entries kept their freshness (format 1) reads as one without any HTTP
    /// information received when its file was last written: fresh for the default lifetime from then.
    public func storedImage(for url: ImageURL) -> StoredImage? {
        let key = Hash128(of: url.absoluteString)
        switch layout.readEntry(key) {
        case .missing:
            forget(key)
            return nil
        case .failed(let error):
            // Not repairable by removal (a symbolic link or a file where the shard should be, no
            // permission): out of this process's index, so that it is no longer taken as cached
            // and the caller loads it again (its store then reports why it cannot be written).
            // Not journaled: the file may still be there, readable by others. The journal is read
            // first, so that no record read later (this process's own store) brings it back.
            logger.warning("disk cache: cannot read an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
            refresh()
            index.withLock { _ = $0.remove(key) }
            return nil
        case .notRegular(let kind, let removal):
            count { $0.damagedRemoved += 1 }
            logger.warning("disk cache: removed \(kind) found in place of an entry", metadata: ["path": "\(layout.entryPath(key))", "url": "\(url)"])
            if let removal { reportRemovalFailure(removal) }
            forget(key, journaled: true)
            return nil
        case .bytes(let file, let modified):
            guard let contents = DiskCacheEntry.contents(of: file, for: url) else {
                count { $0.damagedRemoved += 1 }
                logger.warning("disk cache: removed a damaged entry", metadata: ["path": "\(layout.entryPath(key))", "url": "\(url)", "bytes": "\(file.count)"])
                if let failure = layout.removeEntry(key) { reportRemovalFailure(failure) }
                forget(key, journaled: true)
                return nil
            }
            let known = index.withLock { index in
                if index.use(key) { return true }
                index.store(key, size: file.count)
                return false
            }
            if known {
                // Kept in memory and appended in batches (`DiskCacheJournal.appendUse`): a use is
                // a hint for eviction, so a hit costs no system call on the journal most times.
                if let failure = journal.appendUse(.init(key: key, size: file.count, operation: .used)) { reportJournalFailure(failure) }
            } else {
                record([.init(key: key, size: file.count, operation: .stored)])
            }
            compactIfNeeded()  // a process that only reads still keeps the journal small
            return StoredImage(bytes: contents.body, freshness: contents.freshness ?? HTTPFreshness(storedAt: HTTPDate(secondsSince1970: modified)),
                               hasFreshnessRecord: contents.freshness != nil)
        }
    }

    /// The freshness of the entry for `url`, reading only its header and freshness record (never
    /// the body; not a use): nil when there is no entry, or it is not an intact one for `url`
    /// (`storedImage(for:)` then removes it). A format-1 entry answers as `storedImage(for:)` does.
    public func freshness(of url: ImageURL) -> HTTPFreshness? {
        let key = Hash128(of: url.absoluteString)
        switch layout.readFreshness(key: key, url: Array(url.absoluteString.utf8)) {
        case .done(let freshness): return freshness
        case .withoutRecord(let modified): return HTTPFreshness(storedAt: HTTPDate(secondsSince1970: modified))
        case .missing, .needsWholeRewrite, .damaged, .failed: return nil
        }
    }

    /// The body in `file` if it is a complete, intact entry file for `url`; nil for anything else
    /// (any bytes at all: this never traps).
    package static func body(of file: [UInt8], for url: ImageURL) -> [UInt8]? {
        DiskCacheEntry.body(of: file, for: url)
    }

    // MARK: - Writing

    /// Stores `bytes` for `url` atomically, without HTTP information (received now: fresh for the
    /// default lifetime), then evicts past `capacity`: `store(_:for:freshness:)` with nil, the
    /// outcome dropped (a body too large is not stored, nothing is evicted for it).
    /// - Throws: as `store(_:for:freshness:)`.
    public func store(_ bytes: [UInt8], for url: ImageURL) throws(DiskCacheError) {
        _ = try store(bytes, for: url, freshness: nil)
    }

    /// Stores `bytes` for `url` atomically with its HTTP `freshness`, then evicts past `capacity`.
    /// Without `freshness` the entry has no freshness record (format 1, as entries written before
    /// they kept one): fresh for the default lifetime from the time it was written.
    ///
    /// Returns `.stored`, or why nothing was written: `.tooLarge` for a body whose entry would be
    /// larger than `largestEntry` (nothing is evicted for it; counted in
    /// `counters.oversizedSkipped`); `.forbidden` when `freshness` says the response may not be
    /// stored (`no-store`, or a status other than 200 and 203): then any entry for `url` is
    /// removed too, since it describes an older response (counted in `counters.refusedNoStore`).
    /// - Throws: `DiskCacheError` naming the path when the file cannot be written (full disk,
    ///   immutable or missing folder, a file where `tmp/` or a shard should be), `.tooLarge` for a
    ///   URL longer than 1 MiB; the cache is unchanged then. Also when the entry cannot be recorded
    ///   in the journal (the error names the journal): the entry file is then removed, so that no
    ///   entry is on disk that the index does not show. Failures are also logged and counted.
    @discardableResult
    public func store(_ bytes: [UInt8], for url: ImageURL, freshness: HTTPFreshness?) throws(DiskCacheError) -> StoreOutcome {
        let urlBytes = Array(url.absoluteString.utf8)
        guard urlBytes.count <= DiskCacheEntry.largestURL else {
            count { $0.writeFailures += 1 }
            let error = DiskCacheError(path: folder, message: "the URL is \(urlBytes.count) bytes long; the cache stores URLs of at most \(DiskCacheEntry.largestURL) bytes", code: .tooLarge)
            logger.warning("disk cache: not stored", metadata: ["error": "\(error)"])
            throw error
        }
        guard !inspectOnly else { throw Self.lookedAtOnly(folder) }
        if let unwritable {
            // Nothing is created in a folder whose marker could not be written (a full disk, an
            // immutable folder): a shard made here would make it "not a cache" once there is room.
            count { $0.writeFailures += 1 }
            let error = DiskCacheError(path: unwritable.path, message: "not stored: the cache folder is only read, its marker could not be written: \(unwritable.message)")
            logger.error("disk cache: cannot store an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error
        }
        let key = Hash128(of: url.absoluteString)
        if let freshness, !freshness.isStorable {
            count { $0.refusedNoStore += 1 }
            logger.debug("disk cache: not stored: the response forbids it", metadata: ["url": "\(url)", "status": "\(freshness.status)", "no-store": "\(freshness.noStore)"])
            if containsImage(at: url) { remove(url) }
            return .forbidden
        }
        let file = DiskCacheEntry.encode(body: bytes, url: urlBytes, freshness: freshness)
        let size = file.count
        guard size <= largestEntry else {
            count { $0.oversizedSkipped += 1 }
            logger.debug("disk cache: not stored: larger than the largest entry", metadata: ["url": "\(url)", "bytes": "\(size)", "largest": "\(largestEntry)"])
            return .tooLarge
        }
        do {
            try layout.writeEntry(file, key: key)
        } catch {
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot store an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error
        }
        try recordStored(key, size: size)
        return .stored
    }

    /// Indexes and journals a new entry file, then evicts past the capacity. When the record
    /// cannot be appended, the entry file is removed and the failure thrown.
    private func recordStored(_ key: Hash128, size: Int) throws(DiskCacheError) {
        refresh()  // other processes' writes and uses count for the capacity and the order
        trimPartials(keeping: nil, adding: size)  // partial bodies go before any entry
        let partialBytes = partials.withLock { $0.bytes }
        let victims: [(key: Hash128, size: Int)] = index.withLock { index in
            index.store(key, size: size)
            return evictionVictims(&index, keeping: key, partialBytes: partialBytes)
        }
        let failure = record([.init(key: key, size: size, operation: .stored)] + victims.map { .init(key: $0.key, size: 0, operation: .removed) })
        evict(victims)
        if let failure {
            // Not indexed: the entry file goes too, so that no entry is on disk that no index shows.
            index.withLock { _ = $0.remove(key) }
            if let removal = layout.removeEntry(key) { reportRemovalFailure(removal) }
            throw DiskCacheError(path: failure.path, message: "\(failure.message) (the entry \(layout.entryPath(key)) is not kept)")
        }
        compactIfNeeded()
    }

    /// Replaces the freshness of the entry for `url` (after a `304 Not Modified`: see
    /// `HTTPFreshness.refreshed(byNotModified:requestedAt:receivedAt:)`) without rewriting its
    /// body: the new record goes into the entry's spare slot, in place, under `flock`; a crash
    /// in the middle leaves the previous record (`DiskCacheEntry`). A format-1 entry, or a record
    /// too long for the entry's slots, is rewritten whole (atomically, as `store`).
    ///
    /// Returns whether the entry holds `freshness` now: false when there is no intact entry for
    /// `url`, or when `freshness` forbids storing (`no-store` in the 304): then the entry is removed.
    /// - Throws: `DiskCacheError` naming the entry when it cannot be written.
    @discardableResult
    public func refreshFreshness(of url: ImageURL, to freshness: HTTPFreshness) throws(DiskCacheError) -> Bool {
        let key = Hash128(of: url.absoluteString)
        guard freshness.isStorable else {
            count { $0.refusedNoStore += 1 }
            remove(url)
            return false
        }
        let urlBytes = Array(url.absoluteString.utf8)
        switch layout.rewriteFreshness(DiskCacheEntry.encodeFreshness(freshness), key: key, url: urlBytes) {
        case .done, .withoutRecord:
            return true
        case .missing:
            forget(key)
            return false
        case .damaged:
            _ = storedImage(for: url)  // removes it, logged and counted
            return false
        case .needsWholeRewrite:
            guard let stored = storedImage(for: url) else { return false }
            return try store(stored.bytes, for: url, freshness: freshness) == .stored
        case .failed(let error):
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot refresh an entry's freshness", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error.cacheError
        }
    }

    /// After a `304 Not Modified` carrying `headers` for a request made with the stored entry's
    /// `conditionalHeaders`: the stored bytes with their renewed freshness (already written), or
    /// nil when there is no entry for `url` or the 304 does not match it (its validators differ):
    /// the caller then fetches `url` again without conditions. Never an empty image.
    /// - Throws: as `refreshFreshness(of:to:)`; the bytes are good all the same, but the caller
    ///   learns that the renewed freshness is not on disk.
    public func revalidated(_ url: ImageURL, notModified headers: [(name: String, value: String)],
                            requestedAt: HTTPDate? = nil, receivedAt: HTTPDate) throws(DiskCacheError) -> StoredImage? {
        guard let stored = storedImage(for: url),
              let renewed = stored.freshness.refreshed(byNotModified: headers, requestedAt: requestedAt, receivedAt: receivedAt) else { return nil }
        try refreshFreshness(of: url, to: renewed)
        return StoredImage(bytes: stored.bytes, freshness: renewed, hasFreshnessRecord: renewed.isStorable)
    }

    /// Removes the entry for `url` (nothing, on a cache opened with `inspecting`).
    public func remove(_ url: ImageURL) {
        guard !inspectOnly else { return }
        let key = Hash128(of: url.absoluteString)
        if let failure = layout.removeEntry(key) { reportRemovalFailure(failure) }
        forget(key, journaled: true)
    }

    /// Removes every entry, every partial body and every stale temporary file, never anything else: only the cache's
    /// own names, in real (not symbolic-link) shard folders. Returns what was removed and every
    /// failure (each also logged and counted); what could not be removed stays in the index.
    @discardableResult
    public func removeAll() -> ClearReport {
        guard !inspectOnly else { return ClearReport(removed: 0, temporariesRemoved: 0, failures: [Self.lookedAtOnly(folder)]) }
        let swept = sweep()
        let removal = layout.removeAllEntries()
        for failure in removal.failures { reportRemovalFailure(failure) }
        scanPartials()  // what other processes saved too
        for key in partials.withLock({ Array($0.byKey.keys) }) { removePartial(key) }
        var failures = (swept.failures + removal.failures).map { DiskCacheError(path: $0.path, message: $0.message, code: .removeFailed) }
        if let error = rebuildFromFolder() { failures.append(error) }
        return ClearReport(removed: removal.removed, temporariesRemoved: swept.removed, failures: failures)
    }

    /// Every entry, by URL: its URL (read from its header), its file's size and its image's;
    /// entries with a damaged header, or not regular files, are skipped. Only the headers are
    /// read; nothing ever blocks.
    public func entries() -> [ListedEntry] {
        refresh()
        let keys = index.withLock { $0.byUse.map(\.key) }
        return keys.compactMap { layout.readHeader($0) }.map { ListedEntry(url: $0.url, size: $0.size, imageBytes: $0.imageBytes) }
            .sorted { $0.url < $1.url }
    }

    /// Where the entry for `url` lives (or would): `folder/ab/ab…`, for tools and comparisons.
    public func entryPath(for url: ImageURL) -> String {
        layout.entryPath(Hash128(of: url.absoluteString))
    }

    /// The failure of a write asked of a cache opened to be looked at only.
    private static func lookedAtOnly(_ folder: String) -> DiskCacheError {
        DiskCacheError(path: folder, message: "the cache was opened to be looked at only (DiskCache.inspecting): nothing is written")
    }

    // MARK: - Index upkeep

    /// Reads what other processes appended to the journal (or the whole of a replaced one).
    func refresh() {
        guard !readOnly else { return }
        let now = ContinuousClock.now
        refreshes.withLock {
            $0.lastRead = now
            $0.reads += 1
        }
        switch journal.readNew() {
        case .appended(let records):
            guard records.count > 0 else { return }
            index.withLock { index in records.forEach { index.apply($0) } }
        case .replaced(let snapshot?):
            let fresh = Self.index(from: snapshot)
            index.withLock { $0 = fresh }
        case .replaced(nil):
            if let error = rebuildFromFolder() {
                logger.error("disk cache: cannot write the journal", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
            }
        }
    }

    /// The index of a journal file: its table, then the records after it.
    private static func index(from snapshot: DiskCacheJournal.Snapshot) -> DiskCacheIndex {
        var index = snapshot.index
        snapshot.tail.forEach { index.apply($0) }
        return index
    }

    /// Indexes the folder by listing it (one `fstatat` per entry: only when the journal is new,
    /// damaged or gone), oldest file first, and writes the journal anew.
    @discardableResult
    private func rebuildFromFolder() -> DiskCacheError? {
        guard !readOnly && !inspectOnly else {
            _ = indexFromFolder()
            return nil
        }
        do {
            try journal.rewrite { _ in indexFromFolder() }
            return nil
        } catch {
            count { $0.writeFailures += 1 }
            return error
        }
    }

    /// Lists the folder into the index (oldest file first) and returns it.
    private func indexFromFolder() -> DiskCacheIndex {
        let scan = layout.scanEntries()
        for problem in scan.problems {
            logger.warning("disk cache: skipped", metadata: ["path": "\(problem.path)", "error": "\(problem.message)"])
        }
        let fresh = DiskCacheIndex(compacting: scan.entries.sorted { $0.modified < $1.modified }.map { ($0.key, $0.size) })
        index.withLock { $0 = fresh }
        return fresh
    }

    /// Rewrites the journal (the index's table, records of use as ranks) when more than 4,096
    /// records plus an eighth of the entries were appended after its table.
    private func compactIfNeeded() {
        guard !inspectOnly, journal.recordCount > 4096 else { return }
        // A table still in the file is not read to be counted: a compacted table holds at most half
        // its slots, so this compacts no sooner than the exact count would; the next change (which
        // copies it) counts exactly.
        let live = index.withLock { $0.isLazy ? $0.slotCount / 2 : $0.count }
        guard journal.recordCount > 4096 + live / 8 else { return }
        do {
            try journal.rewrite { change in
                index.withLock { index in
                    if case .appended(let records) = change { records.forEach { index.apply($0) } }
                    index = DiskCacheIndex(compacting: index.byUse)
                    return index
                }
            }
        } catch {
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot rewrite the journal", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
        }
    }

    func evictionVictims(_ index: inout DiskCacheIndex, keeping key: Hash128?, partialBytes: Int) -> [(key: Hash128, size: Int)] {
        let held = counts.withLock { $0.temporaryBytesHeld } + partialBytes
        guard index.totalBytes + held > capacity else { return [] }
        var victims: [(key: Hash128, size: Int)] = []
        let target = capacity / 10 * 9
        for victim in index.byUse where victim.key != key {
            guard index.totalBytes + held > target else { break }
            index.remove(victim.key)
            victims.append(victim)
        }
        return victims
    }

    func evict(_ victims: [(key: Hash128, size: Int)]) {
        guard !victims.isEmpty else { return }
        for victim in victims {
            if let failure = layout.removeEntry(victim.key) { reportRemovalFailure(failure) }
        }
        count { $0.evictions += victims.count }
        logger.info("disk cache: evicted least recently used entries", metadata: [
            "folder": "\(folder)", "entries": "\(victims.count)", "bytes": "\(victims.reduce(0) { $0 + $1.size })",
        ])
    }

    /// Removes stale temporaries: those no live writer holds.
    @discardableResult
    private func sweep() -> (removed: Int, failures: [SystemError]) {
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

    func forget(_ key: Hash128, journaled: Bool = false) {
        let known = index.withLock { $0.remove(key) != nil }
        if known || journaled { record([.init(key: key, size: 0, operation: .removed)]) }
    }

    /// Appends to the journal; a failure is logged, counted and returned (the entry files stay
    /// right: the journal is then behind until it is rebuilt or compacted).
    @discardableResult
    func record(_ records: [DiskCacheJournal.Record]) -> SystemError? {
        guard let failure = journal.append(records) else { return nil }
        reportJournalFailure(failure)
        return failure
    }

    private func reportJournalFailure(_ failure: SystemError) {
        count { $0.writeFailures += 1 }
        logger.error("disk cache: cannot write the journal", metadata: ["path": "\(failure.path)", "error": "\(failure.message)"])
    }

    func reportRemovalFailure(_ failure: SystemError) {
        count { $0.removalFailures += 1 }
        logger.error("disk cache: cannot remove", metadata: ["path": "\(failure.path)", "error": "\(failure.message)"])
    }

    func count(_ change: (inout Counters) -> Void) {
        counts.withLock(change)
    }
}
