import Logging
import Support
import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics

/// Loads images read-through: memory, then disk (a disk hit is copied into memory), then the
/// network (a download is written to both). It is also the policy's `CacheInspecting`: "is it
/// cached?" asks the memory cache and the disk cache's index, with no system call.
///
/// - Identical loads in flight share one transfer. Cancelling one waiter does not stop a transfer
///   others still wait for; cancelling the last one does. A body that fully arrived is cached even
///   if every waiter left at that instant, and a caller arriving while a stopped transfer winds
///   down gets its body if it was complete (it is never fetched twice for that).
/// - A failure is never cached, and frees its in-flight entry, so the next request retries at once.
/// - `purge()` (memory pressure) empties the memory cache and cancels loads nobody waits for.
/// - Each call has a priority (`RequestPriority`, `.visible` by default) that its caller may change
///   while it waits (`setPriority(_:of:)`); a shared load goes to the downloader at the most urgent
///   priority of its callers, updated when one joins, leaves or changes its priority.
/// - Memory hits are immediate. Disk reads (a checksum over the whole body) and disk writes run on
///   threads of their own, never on the cooperative thread pool.
/// - A download is delivered as soon as it is in the memory cache; its disk write waits in a
///   bounded queue (`DiskWritePolicy`: past the bound, writes are dropped, or loads wait for room).
///   `flush()` waits for the writes queued before it (call it before the process exits).
/// - HTTP caching (`http`, see `HTTPOptions` and docs/loading.md): a download is stored with its
///   freshness (`Cache-Control`, `Expires`, validators); a `no-store` response is delivered but
///   never written to disk. A stale disk hit is shown at once and, when `http` allows it on the
///   load's network (a free link by default; never offline), revalidated in the background with
///   `If-None-Match`/`If-Modified-Since`: a 304 keeps the bytes and refreshes their freshness, a
///   200 replaces them; the next load gets the refreshed entry (the image already delivered is
///   not delivered again). An entry that must be revalidated (`no-cache`, stale
///   `must-revalidate`) is revalidated before it is shown, and shown anyway if that fails or the
///   link is offline. A memory hit is shown as it is.
/// - Failed downloads (URL and cause), failed disk writes (path and cause) and dropped writes are
///   logged to `logger`; failed writes are counted and kept in `diskWriteFailures`.
///
/// The pipeline is a facade over stages, each a type of its own (Sources/Pipeline/Stages): the
/// lookup in the caches (`CacheLookup`), the table of loads in flight (`LoadTable`, a state
/// machine returning actions), the download (`Download`), resumable partial bodies
/// (`PartialBodies`), revalidation (`Revalidation`), and measurement and accounting
/// (`LinkAccounting`). It decides which stage runs, and carries the table's actions out.
///
/// Thread safety: every method may be called from any task at once.
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init(downloader: CurlTransport(),
///                              disk: try DiskCache(folder: DiskCache.defaultFolder(environment: env))))
/// let image = try await pipeline.image(for: url)     // image.source: .memory, .disk or .network
/// ```
///
/// In use: the `Fetch` guides “Caching and Data Accounting”, “Getting Started”.
public final class ImagePipeline: CacheInspecting {
    /// What the pipeline was made with (see `Configuration`).
    public let configuration: Configuration
    /// The downloader.
    public let downloader: any ImageDownloading
    /// The memory cache.
    public let memory: MemoryCache
    /// The disk cache, if any.
    public let disk: DiskCache?
    /// Where failed loads, failed disk writes and dropped writes are reported.
    public let logger: Logger
    /// How the pipeline talks HTTP: revalidation, `Save-Data`, `Accept`, the clock.
    public let http: HTTPOptions
    /// Measures the link from this pipeline's downloads (nil: nothing is measured): each response
    /// that carries libcurl's figures (`DownloadResponse.timing`) is recorded on the network its
    /// load was asked for; `linkEstimate(for:)` reads it for decisions and the `ECT`/`Downlink`
    /// hints.
    public var linkEstimator: LinkEstimator? { accounting.estimator }

    private typealias Table = LoadTable<CheckedContinuation<FetchedImage, any Error>, Task<Void, Never>, LoadRequestPriority>

    private struct State {
        /// The loads in flight and their waiters, each load with its priority, network and
        /// `LoadRequestPriority`.
        var table = Table()
        /// Entries removed because their bytes did not decode.
        var undecodableDiscarded = 0
        /// Calls of `waitUntilIdle()` waiting for the last load in flight to end.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    // Guards the table of loads and waiters, the idle waiters and the count of discarded entries.
    private let state = Locked(State())
    /// The threads disk reads run on.
    let readers: BlockingWorkPool
    /// The disk writes' queue and thread.
    let writes: DiskWriteQueue?

    // The stages.
    let lookup: CacheLookup
    let transfer: Download
    let partials: PartialBodies?
    let revalidation: Revalidation
    let accounting: LinkAccounting

    /// Creates a pipeline as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
        downloader = configuration.downloader
        http = configuration.http
        memory = configuration.memory
        disk = configuration.disk
        logger = configuration.logger
        readers = BlockingWorkPool(label: "imgpolicy.disk-reader", width: 2, logger: logger)
        let writes = disk.map { DiskWriteQueue(disk: $0, policy: configuration.diskWrites, logger: configuration.logger) }
        self.writes = writes
        accounting = LinkAccounting(estimator: configuration.linkEstimator)
        lookup = CacheLookup(memory: memory, disk: disk, readers: readers, http: http)
        var partials: PartialBodies?
        if let disk, let writes {
            partials = PartialBodies(disk: disk, thread: writes.thread, clock: configuration.http.clock, logger: configuration.logger)
        }
        self.partials = partials
        transfer = Download(downloader: downloader, memory: memory, writes: writes, http: http, accounting: accounting,
                            partials: partials, logger: logger)
        revalidation = Revalidation(transfer: transfer, disk: disk, memory: memory, readers: readers, http: http,
                                    accounting: accounting, logger: logger)
        // "Is it cached?" from memory from the first milliseconds on (`DiskCache.containsImage(at:)`).
        disk?.readIndexInBackground()
    }

    /// Creates a pipeline; `diskWrites` bounds the queue of disk-cache writes; `linkEstimator`
    /// measures the link from the downloads (a new one by default; nil measures nothing). The
    /// same as `init(configuration:)` with these values.
    public convenience init(downloader: any ImageDownloading, memory: MemoryCache = MemoryCache(), disk: DiskCache?,
                            diskWrites: DiskWritePolicy = .dropWhenFull, http: HTTPOptions = .standard,
                            linkEstimator: LinkEstimator? = LinkEstimator(), logger: Logger = .disabled) {
        self.init(configuration: Configuration(downloader: downloader, memory: memory, disk: disk, diskWrites: diskWrites,
                                               http: http, linkEstimator: linkEstimator, logger: logger))
    }

    /// The link measured by this pipeline's downloads on `network`'s kind (see `LinkEstimator`):
    /// what `ImageLoader` passes to `ImagePolicy.decide(…, estimate:)`. Nil without an estimator,
    /// offline, or before a download counted on that kind.
    public func linkEstimate(for network: NetworkState) -> LinkEstimate? {
        accounting.estimate(for: network)
    }

    /// Whether `url` is in the memory cache or the disk cache's index: from memory, with no system
    /// call (see `DiskCache.containsImage(at:)` for when other processes' entries become visible).
    public func containsImage(at url: ImageURL) -> Bool {
        lookup.contains(url)
    }

    /// The image at `url`, from the first of memory, disk and (when `networkAllowed`) the network
    /// that has it.
    ///
    /// `priority` is this call's priority (a new `.visible` one when nil): keep it to change it
    /// while the call waits, with `setPriority(_:of:)`. `network` is the link the load runs on
    /// (nil: unknown, taken as a free link): it decides whether a stale disk entry is revalidated
    /// and whether requests carry `Save-Data` (see `HTTPOptions`).
    /// - Throws: a `FetchError`: `.offline` when the network is not allowed and no cache has it,
    ///   `.cancelled` when the calling task is cancelled, or what the download failed with.
    public func image(for url: ImageURL, networkAllowed: Bool = true, priority: RequestPriority? = nil,
                      network: NetworkState? = nil) async throws(FetchError) -> FetchedImage {
        try await image(for: url, networkAllowed: networkAllowed, mayRevalidate: networkAllowed, priority: priority, network: network,
                        variant: nil)
    }

    /// `image(for:networkAllowed:priority:network:)`; `mayRevalidate` lets a stale disk hit be
    /// revalidated in the background even when the image itself may not be downloaded (a decision
    /// to show the cached copy, made online).
    /// `variant` is what the load is for (nil: a URL without a decision), for `backgroundUsage`.
    func image(for url: ImageURL, networkAllowed: Bool, mayRevalidate: Bool, priority: RequestPriority?,
               network: NetworkState?, variant: Variant?) async throws(FetchError) -> FetchedImage {
        if let hit = lookup.memoryHit(url) { return hit }
        if await lookup.diskHolds(url) || !networkAllowed, let stored = await lookup.storedImage(for: url) {
            let revalidates = mayRevalidate && http.revalidates(on: network)
            switch lookup.freshness(of: stored) {
            case .fresh, .neverStore:
                return stored.image(url)
            case .stale:
                if revalidates { revalidation.revalidateInBackground(url, stored, network: network, variant: variant) }
                return stored.image(url)
            case .mustRevalidate:
                // Offline, or the decision is to show the cached copy: shown all the same (as
                // stale-if-error), and revalidated in the background when the link allows it.
                guard networkAllowed, network?.kind != .offline else {
                    if revalidates { revalidation.revalidateInBackground(url, stored, network: network, variant: variant) }
                    return stored.image(url)
                }
            }
        }
        guard networkAllowed else { throw FetchError(url: url, code: .offline) }
        let priority = priority ?? RequestPriority()
        let waiter = state.withLock { state in
            // The caller's value read under the lock, as `setPriority` writes it: no change is missed.
            state.table.makeWaiter(for: url, priority: priority.value, key: ObjectIdentifier(priority), network: network)
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    register(waiter, continuation)
                }
            } onCancel: {
                cancelWaiter(waiter, for: url)
            }
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError(url: url, code: .cancelled)
        }
    }

    /// The image at `url` if the memory cache or the disk cache has it (read off the cooperative
    /// pool), else nil; never touches the network. A damaged entry is removed and is a miss.
    public func cachedImage(for url: ImageURL) async -> FetchedImage? {
        if let hit = lookup.memoryHit(url) { return hit }
        return await lookup.storedImage(for: url)?.image(url)
    }

    /// `cachedImage(for:)`, and a stale disk hit (or one that must be revalidated) is revalidated
    /// in the background when `http` allows it on `network` (the image itself is never
    /// downloaded here: this is for a decision to show the cached copy).
    /// `variant` is the variant the decision was for, for `backgroundUsage`.
    public func cachedImage(for url: ImageURL, revalidatingOn network: NetworkState, variant: Variant? = nil) async -> FetchedImage? {
        if let hit = lookup.memoryHit(url) { return hit }
        guard let stored = await lookup.storedImage(for: url) else { return nil }
        if http.revalidates(on: network), lookup.freshness(of: stored) != .fresh, stored.freshness.isStorable {
            revalidation.revalidateInBackground(url, stored, network: network, variant: variant)
        }
        return stored.image(url)
    }

    /// Starts loading `url` into the caches with nobody waiting, at `priority`; `purge()` cancels
    /// it if it is still running then. It does not ask the policy: a list prefetches what its
    /// policy's `PrefetchPlan` allows (see `ImageList`).
    public func prefetch(_ url: ImageURL, priority: LoadPriority = LoadPriority(.prefetch)) {
        guard !containsImage(at: url) else { return }
        guard let load = state.withLock({ $0.table.prefetch(url, priority: priority, newLoad: LoadRequestPriority.init) }) else { return }
        start(url, load)
    }

    /// Sets `priority` (one given to `image(for:networkAllowed:priority:)` or `load(_:decision:priority:)`)
    /// to `value`, and the loads its calls wait for take it into account at once: a waiting
    /// transfer whose row came on screen overtakes prefetching.
    public func setPriority(_ value: LoadPriority, of priority: RequestPriority) {
        priority.value = value
        let changes = state.withLock { state in
            // The value read again under the lock: when two calls race, the table ends on the
            // object's last value, whichever call takes the lock last.
            state.table.reprioritize(ObjectIdentifier(priority), to: priority.value)
        }
        apply(changes)
    }

    /// The priority the downloader sees for the load of `url` in flight, if any: for tests and
    /// diagnostics.
    public func requestPriority(of url: ImageURL) -> LoadPriority? {
        state.withLock { $0.table.context(of: url) }?.request.value
    }

    /// Holds downloads that have not started, while images already in memory or on disk are still
    /// delivered at once: call it when the user starts dragging a list (the lesson of Apple's
    /// LazyTableImages), and `resumeDownloads()` when scrolling ends. Slots reused meanwhile cancel
    /// their held loads, so what starts on resume is what is on screen.
    public func suspendDownloads() {
        downloader.suspend()
    }

    /// Lets held downloads start.
    public func resumeDownloads() {
        downloader.resume()
    }

    /// Empties the memory cache and cancels the loads nobody waits for.
    public func purge() {
        memory.purge()
        let tasks = state.withLock { $0.table.purge() }
        for task in tasks { task.cancel() }
    }

    /// Where the bytes the pipeline downloads on its own are counted: a background revalidation
    /// answered 200 (a replacement downloaded while the stale copy was shown) is recorded as a
    /// download from the network, under the link the load was decided on and the variant it was
    /// for (`.original` for a URL loaded without a decision). nil (the default): not counted. An
    /// `ImageLoader` given a recorder sets it here when none is set, so that the bytes a loader's
    /// loads cause are all counted, including those spent after the load returned.
    public var backgroundUsage: DataUsageRecorder? {
        get { accounting.backgroundUsage }
        set { accounting.backgroundUsage = newValue }
    }

    /// Removes the image at `url` from the memory and the disk cache because its bytes did not
    /// decode (a body cut short or damaged that an earlier version cached, a server that sent
    /// garbage with an image's signature), and counts it (`undecodableDiscarded`): the next load
    /// then misses, fetching the image again where the network allows, or falling back (the
    /// cached thumbnail, the placeholder) where it does not. Returns when the disk entry is gone.
    ///
    /// ```swift
    /// do { image = try decoder.decode(fetched.bytes) } catch {
    ///     await pipeline.discardUndecodable(fetched.url)   // then decide and load again
    /// }
    /// ```
    public func discardUndecodable(_ url: ImageURL) async {
        memory.remove(url)
        if let disk {
            if let writes {
                // After any write of it queued before: the entry must not come back.
                await writes.flush()
            }
            await readers.run { disk.remove(url) }
        }
        state.withLock { $0.undecodableDiscarded += 1 }
        logger.notice("an image that does not decode was removed from the caches", metadata: ["url": "\(url)"])
    }

    /// Every read-out at this call (see `Statistics`).
    public var statistics: Statistics {
        let (inFlight, waiters, undecodable) = state.withLock { state in
            (state.table.loads.count, state.table.waiterCount, state.undecodableDiscarded)
        }
        let writes = self.writes?.statistics ?? DiskWriteQueue.Statistics()
        let causes = (self.writes?.failures ?? []).map { DiskWriteFailure(error: $0.error, occurrences: $0.occurrences) }
        return Statistics(inFlight: inFlight, waiters: waiters, downloads: transfer.downloads,
                          pendingDiskWrites: writes.pending, diskWritesCompleted: writes.written, diskWriteFailures: writes.failed,
                          diskWritesDropped: writes.dropped, diskWriteFailureCauses: causes, revalidation: revalidation.statistics,
                          resume: partials?.statistics ?? ResumeStatistics(), undecodableDiscarded: undecodable)
    }

    /// Returns once no load is in flight: every load started before (or while) it waits has
    /// ended, and with it the disk write it queued (a body that arrived as its transport was shut
    /// down queues it from its own task). Loads that never end (a transfer without a timeout) keep
    /// it waiting: shut their transport down first. `ImageSystem.shutdown()` calls it between the
    /// transport's shutdown and `flush()`.
    public func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.table.loads.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Waits until the background revalidations running at this call have ended, then until
    /// every disk write queued before that has ended, partial bodies of ended transfers included
    /// (not for writes queued later: steady traffic cannot keep it waiting). A process that calls
    /// it before exiting leaves no partial body half-saved in the cache's `tmp/`.
    public func flush() async {
        await revalidation.waitForRunning()
        await writes?.flush()
        // Partial bodies are saved on the writer's one thread, in order: a job queued now runs
        // after every save a transfer asked for before it.
        await writes?.thread.run {}
    }

    // MARK: - Carrying out the table's actions

    /// Applies the table's priority changes to the loads' `RequestPriority` (outside the lock).
    private func apply(_ changes: [Table.PriorityChange]) {
        for change in changes { apply(change) }
    }

    /// Applies one of the table's priority changes, if there is one (outside the lock).
    private func apply(_ change: Table.PriorityChange?) {
        guard let change else { return }
        change.context.apply(change.value, revision: change.revision)
    }

    private func register(_ waiter: Table.WaiterID, _ continuation: CheckedContinuation<FetchedImage, any Error>) {
        let action = state.withLock { $0.table.register(waiter, continuation, newLoad: LoadRequestPriority.init) }
        switch action {
        case .resumeCancelled(let continuation):
            continuation.resume(throwing: CancellationError())
        case .start(let url, let load):
            start(url, load)
        case .joined(let change):
            apply(change)
        }
    }

    private func cancelWaiter(_ waiter: Table.WaiterID, for url: ImageURL) {
        guard case .resumeCancelled(let continuation, let task, let change) = state.withLock({ $0.table.cancel(waiter) }) else { return }
        apply(change)
        task?.cancel()
        continuation.resume(throwing: FetchError(url: url, code: .cancelled))
    }

    // MARK: - Loading

    private func start(_ url: ImageURL, _ load: Table.LoadID) {
        let (priority, network) = state.withLock { ($0.table.context(of: url), $0.table.loads[url]?.network) }
        let task = Task { [self] in
            let result: Result<FetchedImage, FetchError>
            do throws(FetchError) {
                result = .success(try await fetch(url, priority: priority?.request ?? RequestPriority(), network: network))
            } catch {
                result = .failure(error)
            }
            finish(url, load, with: result, network: network)
        }
        state.withLock { $0.table.started(url, load, handle: task) }?.cancel()
    }

    /// A load's work: memory, then disk (revalidated first when it must be), then the network.
    private func fetch(_ url: ImageURL, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        if let hit = lookup.memoryHit(url) { return hit }
        // Also finds entries other processes wrote since the index was built.
        if let stored = await lookup.storedImage(for: url) {
            guard lookup.freshness(of: stored) == .mustRevalidate else { return stored.image(url) }
            do {
                return try await revalidation.revalidate(url, stored, priority: priority, network: network)
            } catch where error.code != .cancelled {
                logger.info("revalidation failed: the stored image is shown", metadata: ["url": "\(url)", "error": "\(error)"])
                var image = stored.image(url)
                image.failedBytes = error.receivedBytes
                return image
            }
        }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        return try await transfer.download(url, priority: priority, network: network)
    }

    /// Ends the load of `url`: resumes its waiters, or starts it again. The bytes of failed
    /// attempts that no waiter's loader counts (a cancelled transfer, whose waiters left first; a
    /// load nobody waits for) are counted into `backgroundUsage` under `network`.
    private func finish(_ url: ImageURL, _ load: Table.LoadID, with result: Result<FetchedImage, FetchError>, network: NetworkState?) {
        let stopped = if case .failure(let error) = result, error.code == .cancelled { true } else { false }
        let (action, idle) = state.withLock { state in
            let action = state.table.finished(url, load, stopped: stopped)
            var idle: [CheckedContinuation<Void, Never>] = []
            if state.table.loads.isEmpty { swap(&idle, &state.idleWaiters) }
            return (action, idle)
        }
        for waiter in idle { waiter.resume() }
        let nobodyReceives = if case .resume(let waiters) = action { waiters.isEmpty } else { false }
        let uncounted = switch result {
        case .failure(let error) where stopped || nobodyReceives: error.receivedBytes
        case .success(let image) where nobodyReceives: image.failedBytes
        default: 0
        }
        // Outside the lock: the recorder calls its observers.
        accounting.recordUncounted(uncounted, on: network)
        switch action {
        case .restart(let url, let load, let change):
            apply(change)
            start(url, load)
        case .resume(let waiters):
            for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        }
    }
}
