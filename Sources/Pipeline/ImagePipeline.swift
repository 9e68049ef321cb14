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
/// Thread safety: every method may be called from any task at once.
///
/// ```swift
/// let pipeline = ImagePipeline(downloader: CurlTransport(), memory: MemoryCache(),
///                              disk: try DiskCache(folder: DiskCache.defaultFolder(environment: env)))
/// let image = try await pipeline.image(for: url)     // image.source: .memory, .disk or .network
/// ```
///
/// In use: the `Fetch` guides “Caching and Data Accounting”, “Getting Started”.
public final class ImagePipeline: CacheInspecting {
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
    public let linkEstimator: LinkEstimator?

    private typealias Table = LoadTable<CheckedContinuation<FetchedImage, any Error>, Task<Void, Never>>

    private struct State {
        var table = Table()
        var downloads = 0
        /// The network each load in flight was asked for on (the last caller's).
        var networks: [ImageURL: NetworkState] = [:]
        /// URLs being revalidated in the background.
        var revalidating: [ImageURL: Task<Void, Never>] = [:]
        /// Where background transfers are counted (see `backgroundUsage`).
        var backgroundUsage: DataUsageRecorder?
        var revalidation = RevalidationStatistics()
        var resumes = ResumeStatistics()
        /// Entries removed because their bytes did not decode.
        var undecodableDiscarded = 0
        /// Calls of `waitUntilIdle()` waiting for the last load in flight to end.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    // Guards the table of loads and waiters, and the download count.
    private let state = Locked(State())
    /// The threads disk reads run on.
    let readers: BlockingWorkPool
    /// The disk writes' queue and thread.
    let writes: DiskWriteQueue?

    /// Creates a pipeline; `diskWrites` bounds the queue of disk-cache writes; `linkEstimator`
    /// measures the link from the downloads (a new one by default; nil measures nothing).
    public init(downloader: any ImageDownloading, memory: MemoryCache = MemoryCache(), disk: DiskCache?,
                diskWrites: DiskWritePolicy = .dropWhenFull, http: HTTPOptions = .standard,
                linkEstimator: LinkEstimator? = LinkEstimator(), logger: Logger = .disabled) {
        self.linkEstimator = linkEstimator
        self.downloader = downloader
        self.http = http
        self.memory = memory
        self.disk = disk
        self.logger = logger
        readers = BlockingWorkPool(label: "imgpolicy.disk-reader", width: 2, logger: logger)
        writes = disk.map { DiskWriteQueue(disk: $0, policy: diskWrites, logger: logger) }
        // "Is it cached?" from memory from the first milliseconds on (`DiskCache.containsImage(at:)`).
        disk?.readIndexInBackground()
    }

    /// The link measured by this pipeline's downloads on `network`'s kind (see `LinkEstimator`):
    /// what `ImageLoader` passes to `ImagePolicy.decide(…, estimate:)`. Nil without an estimator,
    /// offline, or before a download counted on that kind.
    public func linkEstimate(for network: NetworkState) -> LinkEstimate? {
        linkEstimator?.estimate(for: network)
    }

    /// Whether `url` is in the memory cache or the disk cache's index: from memory, with no system
    /// call (see `DiskCache.containsImage(at:)` for when other processes' entries become visible).
    public func containsImage(at url: ImageURL) -> Bool {
        memory.containsImage(at: url) || (disk?.containsImage(at: url) ?? false)
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
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        if await diskHolds(url) || !networkAllowed, let stored = await storedImage(for: url) {
            let revalidates = mayRevalidate && http.revalidates(on: network)
            switch stored.freshness.state(at: http.clock(), rules: http.freshnessRules) {
            case .fresh, .neverStore:
                return stored.image(url)
            case .stale:
                if revalidates { revalidateInBackground(url, stored, network: network, variant: variant) }
                return stored.image(url)
            case .mustRevalidate:
                // Offline, or the decision is to show the cached copy: shown all the same (as
                // stale-if-error), and revalidated in the background when the link allows it.
                guard networkAllowed, network?.kind != .offline else {
                    if revalidates { revalidateInBackground(url, stored, network: network, variant: variant) }
                    return stored.image(url)
                }
            }
        }
        guard networkAllowed else { throw FetchError(url: url, code: .offline) }
        let priority = priority ?? RequestPriority()
        let waiter = state.withLock { state in
            if let network { state.networks[url] = network }
            return state.table.makeWaiter(for: url, priority: priority)
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
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        return await storedImage(for: url)?.image(url)
    }

    /// `cachedImage(for:)`, and a stale disk hit (or one that must be revalidated) is revalidated
    /// in the background when `http` allows it on `network` (the image itself is never
    /// downloaded here: this is for a decision to show the cached copy).
    /// `variant` is the variant the decision was for, for `backgroundUsage`.
    public func cachedImage(for url: ImageURL, revalidatingOn network: NetworkState, variant: Variant? = nil) async -> FetchedImage? {
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        guard let stored = await storedImage(for: url) else { return nil }
        if http.revalidates(on: network), stored.freshness.state(at: http.clock(), rules: http.freshnessRules) != .fresh,
           stored.freshness.isStorable {
            revalidateInBackground(url, stored, network: network, variant: variant)
        }
        return stored.image(url)
    }

    /// Starts loading `url` into the caches with nobody waiting, at `priority`; `purge()` cancels
    /// it if it is still running then. It does not ask the policy: a list prefetches what its
    /// policy's `PrefetchPlan` allows (see `ImageList`).
    public func prefetch(_ url: ImageURL, priority: LoadPriority = LoadPriority(.prefetch)) {
        guard !containsImage(at: url) else { return }
        guard let load = state.withLock({ $0.table.prefetch(url, priority: priority) }) else { return }
        start(url, load)
    }

    /// Sets `priority` (one given to `image(for:networkAllowed:priority:)` or `load(_:decision:priority:)`)
    /// to `value`, and the loads its calls wait for take it into account at once: a waiting
    /// transfer whose row came on screen overtakes prefetching.
    public func setPriority(_ value: LoadPriority, of priority: RequestPriority) {
        state.withLock { state in
            priority.value = value
            state.table.reprioritize(priority)
        }
    }

    /// The priority the downloader sees for the load of `url` in flight, if any: for tests and
    /// diagnostics.
    public func requestPriority(of url: ImageURL) -> LoadPriority? {
        state.withLock { $0.table.requestPriority(of: url)?.value }
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
        get { state.withLock { $0.backgroundUsage } }
        set { state.withLock { $0.backgroundUsage = newValue } }
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
        let pipeline = state.withLock { state in
            (inFlight: state.table.loads.count, waiters: state.table.waiterCount, downloads: state.downloads,
             revalidation: state.revalidation, resume: state.resumes, undecodable: state.undecodableDiscarded)
        }
        let writes = self.writes?.statistics ?? (pending: 0, written: 0, failed: 0, dropped: 0)
        let causes = (self.writes?.failures ?? []).map { DiskWriteFailure(error: $0.error, occurrences: $0.occurrences) }
        return Statistics(inFlight: pipeline.inFlight, waiters: pipeline.waiters, downloads: pipeline.downloads,
                          pendingDiskWrites: writes.pending, diskWritesCompleted: writes.written, diskWriteFailures: writes.failed,
                          diskWritesDropped: writes.dropped, diskWriteFailureCauses: causes, revalidation: pipeline.revalidation,
                          resume: pipeline.resume, undecodableDiscarded: pipeline.undecodable)
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
        let revalidations = state.withLock { Array($0.revalidating.values) }
        for revalidation in revalidations { await revalidation.value }
        await writes?.flush()
        // Partial bodies are saved on the writer's one thread, in order: a job queued now runs
        // after every save a transfer asked for before it.
        await writes?.thread.run {}
    }

    // MARK: - Waiters

    private func register(_ waiter: Table.WaiterID, _ continuation: CheckedContinuation<FetchedImage, any Error>) {
        let action = state.withLock { $0.table.register(waiter, continuation) }
        switch action {
        case .resumeCancelled(let continuation):
            continuation.resume(throwing: CancellationError())
        case .start(let url, let load):
            start(url, load)
        case .joined:
            break
        }
    }

    private func cancelWaiter(_ waiter: Table.WaiterID, for url: ImageURL) {
        guard case .resumeCancelled(let continuation, let task) = state.withLock({ $0.table.cancel(waiter) }) else { return }
        task?.cancel()
        continuation.resume(throwing: FetchError(url: url, code: .cancelled))
    }

    // MARK: - Loading

    private func start(_ url: ImageURL, _ load: Table.LoadID) {
        let (priority, network) = state.withLock { ($0.table.requestPriority(of: url), $0.networks[url]) }
        let task = Task { [self] in
            let result: Result<FetchedImage, FetchError>
            do throws(FetchError) {
                result = .success(try await fetch(url, priority: priority ?? RequestPriority(), network: network))
            } catch {
                result = .failure(error)
            }
            finish(url, load, with: result, network: network)
        }
        state.withLock { $0.table.started(url, load, handle: task) }?.cancel()
    }

    private func fetch(_ url: ImageURL, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        // Also finds entries other processes wrote since the index was built.
        if let stored = await storedImage(for: url) {
            guard stored.freshness.state(at: http.clock(), rules: http.freshnessRules) == .mustRevalidate else { return stored.image(url) }
            do {
                return try await revalidate(url, stored, priority: priority, network: network)
            } catch where error.code != .cancelled {
                logger.info("revalidation failed: the stored image is shown", metadata: ["url": "\(url)", "error": "\(error)"])
                var image = stored.image(url)
                image.failedBytes = error.receivedBytes
                return image
            }
        }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        return try await download(url, priority: priority, network: network)
    }

    /// Downloads `url` without conditions and stores it with its freshness. With a disk cache,
    /// the body is kept as a partial body while it arrives (every `partialLimits.minimumBytes`, and
    /// when the transfer stops early), and a partial body kept earlier is handed to the downloader
    /// to resume (`DownloadRequest.resuming`): `CurlTransport` asks for the rest only and combines
    /// it with the kept bytes only when the server's `206` is the rest of the same version.
    private func download(_ url: ImageURL, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        state.withLock { $0.downloads += 1 }
        var request = DownloadRequest(url: url, headers: negotiationHeaders(on: network), priority: priority,
                                      retries: http.retries(on: network))
        // Set once the whole body came: checkpoint saves still queued then are skipped (the partial
        // body is discarded right after), so that a body that arrives whole costs no disk writes.
        let completed = Locked(false)
        if let disk, let writes {
            // Only when partial bodies exist (counted in memory: no disk call for the common case).
            if disk.partialStatistics.count > 0, let kept = await writes.thread.run({ disk.partial(for: url) }) {
                request.resuming = kept
            }
            // A range counts encoded bytes: resumable bodies are asked for as they are.
            request.headers.append(("Accept-Encoding", "identity"))
            request.checkpoints = partialCheckpoints(for: url, disk: disk, thread: writes.thread, completed: completed)
        }
        let requestedAt = http.clock()
        let response: DownloadResponse
        do {
            response = try await downloader.response(to: request)
        } catch {
            if error.code != .cancelled {
                logger.warning("download failed", metadata: ["url": "\(url)", "error": "\(error)"])
            }
            throw error
        }
        measure(response, on: network)
        var image = try await adding(failedBytes: response.failedAttemptBytes) { () async throws(FetchError) in
            try await accept(response, for: url, requestedAt: requestedAt)
        }
        image.retries = max(1, response.attempts) - 1
        if response.resumedBytes > 0 {
            image.resumedBytes = response.resumedBytes
            state.withLock { $0.resumes.add(savedBytes: response.resumedBytes) }
        }
        // The whole body came: no partial body is left.
        completed.withLock { $0 = true }
        if let disk, let writes, request.resuming != nil || response.body.count >= disk.partialLimits.minimumBytes {
            writes.thread.submit { disk.discardPartial(for: url) }
        }
        return image
    }

    /// Keeps the body of a transfer of `url` as a partial body while it arrives: a 200 with a
    /// strong validator, a `Content-Length` and no `Content-Encoding` (a body the downloader
    /// combined with kept bytes comes as the 200 it completes). The first report is saved, each
    /// later one appended (`appendPartial`, which does nothing unless the partial body on disk
    /// ends exactly where the report starts), on the disk writer's one thread, in order: a body
    /// of n bytes is written once, not once per report; saves still queued when the whole body
    /// has come (`completed`) are skipped.
    private func partialCheckpoints(for url: ImageURL, disk: DiskCache, thread: BlockingWorkPool, completed: Locked<Bool>) -> BodyCheckpoints {
        let clock = http.clock
        let logger = self.logger
        return BodyCheckpoints(every: max(1, disk.partialLimits.minimumBytes)) { received in
            guard received.status == 200 else { return }
            let fields = ResponseFields(received.headers)
            if let encoding = fields.contentEncoding, encoding.lowercased() != "identity" { return }
            guard let total = fields.singleContentLength, total > received.length,
                  let validator = HTTPFreshness(status: 200, headers: received.headers, receivedAt: clock()).rangeValidator else { return }
            let (bytes, offset) = (received.bytes, received.offset)
            thread.submit {
                guard !completed.withLock({ $0 }) else { return }
                do throws(DiskCacheError) {
                    if offset == 0 {
                        _ = try disk.savePartial(bytes, for: url, validator: validator, totalLength: total)
                    } else {
                        _ = try disk.appendPartial(bytes, for: url, at: offset)
                    }
                } catch {
                    logger.info("cannot keep a partial body", metadata: ["url": "\(url)", "error": "\(error.message)"])
                }
            }
        }
    }

    /// A whole image answered for `url`: checked against `Accept`, kept in memory, queued for the
    /// disk with its freshness (`no-store`: never written, and an older entry is removed).
    /// A body refused here was received all the same: its error counts it (`receivedBytes`).
    private func accept(_ response: DownloadResponse, for url: ImageURL, requestedAt: HTTPDate) async throws(FetchError) -> FetchedImage {
        let bytes: [UInt8]
        do throws(FetchError) {
            bytes = try response.wholeImage(of: url)
            // A downloader other than `CurlTransport` may not have checked that the body is whole.
            if !response.wholeImageChecked, case .incomplete(let detail) = ImageCompleteness.check(bytes) {
                throw FetchError(url: url, code: .incompleteImage(detail))
            }
            try http.checkFormat(of: bytes, for: url)
        } catch {
            throw error.adding(receivedBytes: response.body.count)
        }
        let freshness = HTTPFreshness(status: 200, headers: response.headers, requestedAt: requestedAt, receivedAt: http.clock())
        // A complete body is kept whoever still waits: memory first, then the disk queue.
        memory.store(bytes, for: url)
        await writes?.enqueue(bytes, for: url, freshness: freshness)
        return FetchedImage(url: url, bytes: bytes, source: .network)
    }

    /// Asks the server whether `stored` is still good: 304 keeps its bytes (their freshness
    /// renewed on disk; source `.disk`, nothing was downloaded), 200 replaces them. A 304 that
    /// does not match the entry (or finds it gone) is followed by a download without conditions.
    private func revalidate(_ url: ImageURL, _ stored: StoredImage, priority: RequestPriority,
                            network: NetworkState?) async throws(FetchError) -> FetchedImage {
        let conditions = stored.freshness.conditionalHeaders
        guard !conditions.isEmpty, let disk else { return try await download(url, priority: priority, network: network) }
        state.withLock { $0.downloads += 1 }
        let requestedAt = http.clock()
        let response = try await downloader.response(to: DownloadRequest(url: url, headers: conditions + negotiationHeaders(on: network),
                                                                          priority: priority, retries: http.retries(on: network)))
        measure(response, on: network)
        return try await adding(failedBytes: response.failedAttemptBytes) { () async throws(FetchError) in
            try await revalidated(url, stored, response, disk: disk, requestedAt: requestedAt, priority: priority, network: network)
        }
    }

    /// What the answer to a revalidation of `stored` makes of it (see `revalidate`).
    private func revalidated(_ url: ImageURL, _ stored: StoredImage, _ response: DownloadResponse, disk: DiskCache,
                             requestedAt: HTTPDate, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        guard response.status == 304 else { return try await accept(response, for: url, requestedAt: requestedAt) }
        let receivedAt = http.clock()
        let renewed = await readers.run { () -> Result<StoredImage?, DiskCacheError> in
            Result { () throws(DiskCacheError) in try disk.revalidated(url, notModified: response.headers, requestedAt: requestedAt, receivedAt: receivedAt) }
        }
        switch renewed {
        case .success(let image?):
            memory.store(image.bytes, for: url)
            return FetchedImage(url: url, bytes: image.bytes, source: .disk)
        case .success(nil):
            logger.info("a 304 did not match the stored entry: downloading again", metadata: ["url": "\(url)"])
            return try await download(url, priority: priority, network: network)
        case .failure(let error):
            logger.warning("cannot record a revalidation", metadata: ["url": "\(url)", "path": "\(error.path)", "error": "\(error.message)"])
            memory.store(stored.bytes, for: url)
            return stored.image(url)
        }
    }

    /// `Save-Data`, the network hints for the link measured on `network`, and `Accept`.
    private func negotiationHeaders(on network: NetworkState?) -> [(name: String, value: String)] {
        http.negotiationHeaders(on: network, estimate: network.flatMap { linkEstimate(for: $0) })
    }

    /// Records `response`'s figures on the network its load was asked for (a load without a
    /// network, or a response without figures, is not measured; a 304's figures are ignored).
    private func measure(_ response: DownloadResponse, on network: NetworkState?) {
        guard let linkEstimator, let network, let timing = response.timing else { return }
        linkEstimator.record(timing, on: network)
    }

    /// Revalidates `url` on its own task, at prefetch priority, once at a time per URL.
    private func revalidateInBackground(_ url: ImageURL, _ stored: StoredImage, network: NetworkState?, variant: Variant?) {
        state.withLock { table in
            guard table.revalidating[url] == nil else { return }
            table.revalidation.started += 1
            // Created under the lock (nothing runs here), so that the task's own removal comes after.
            table.revalidating[url] = Task { [self] in await runRevalidation(url, stored, network: network, variant: variant) }
        }
    }

    private func runRevalidation(_ url: ImageURL, _ stored: StoredImage, network: NetworkState?, variant: Variant?) async {
        let outcome: Result<FetchedImage, FetchError>
        do throws(FetchError) {
            outcome = .success(try await revalidate(url, stored, priority: RequestPriority(LoadPriority(.prefetch)), network: network))
        } catch {
            outcome = .failure(error)
        }
        let usage = state.withLock { state in
            state.revalidating[url] = nil
            switch outcome {
            case .success(let image) where image.source == .network: state.revalidation.replaced += 1
            case .success: state.revalidation.notModified += 1
            case .failure: state.revalidation.failed += 1
            }
            return state.backgroundUsage
        }
        // Outside the lock: the recorder calls its observers.
        if let usage {
            let link = network ?? NetworkState(.unknown)
            switch outcome {
            case .success(let image) where image.source == .network:
                usage.recordBackgroundDownload(bytes: image.bytes.count, retries: image.retries, failedBytes: image.failedBytes,
                                               variant: variant ?? .original, on: link)
            case .success(let image):
                usage.recordFailedBytes(image.failedBytes, on: link)
            case .failure(let error):
                usage.recordRetries(max(1, error.attempts) - 1, on: link)
                usage.recordFailedBytes(error.receivedBytes, on: link)
            }
        }
    }

    /// Whether the disk cache's index holds `url`. Before a miss sends the load to the network,
    /// the journal is read on a disk thread when the last read is older than
    /// `DiskCache.inspectionRefreshInterval`, so that what another process stored meanwhile is
    /// read rather than downloaded again (`containsImage(at:)` itself never touches the disk).
    private func diskHolds(_ url: ImageURL) async -> Bool {
        guard let disk else { return false }
        if disk.indexHolds(url) { return true }
        guard disk.refreshIsDue else { return false }
        return await readers.run {
            disk.refreshIfDue()
            return disk.indexHolds(url)
        }
    }

    /// The stored image for `url` read on a disk thread, or nil. It is kept in memory unless it
    /// must be revalidated before it is shown (else the memory hit would skip that).
    private func storedImage(for url: ImageURL) async -> StoredImage? {
        guard let disk else { return nil }
        guard let stored = await readers.run({ disk.storedImage(for: url) }) else { return nil }
        if stored.freshness.state(at: http.clock(), rules: http.freshnessRules) != .mustRevalidate {
            memory.store(stored.bytes, for: url)
        }
        return stored
    }

    /// Ends the load of `url`: resumes its waiters, or starts it again. The bytes of failed
    /// attempts that no waiter's loader counts (a cancelled transfer, whose waiters left first; a
    /// load nobody waits for) are counted into `backgroundUsage` under `network`.
    private func finish(_ url: ImageURL, _ load: Table.LoadID, with result: Result<FetchedImage, FetchError>, network: NetworkState?) {
        let stopped = if case .failure(let error) = result, error.code == .cancelled { true } else { false }
        let (action, usage, idle) = state.withLock { state in
            let action = state.table.finished(url, load, stopped: stopped)
            if state.table.loads[url] == nil { state.networks[url] = nil }
            var idle: [CheckedContinuation<Void, Never>] = []
            if state.table.loads.isEmpty { swap(&idle, &state.idleWaiters) }
            return (action, state.backgroundUsage, idle)
        }
        for waiter in idle { waiter.resume() }
        let nobodyReceives = if case .resume(let waiters) = action { waiters.isEmpty } else { false }
        let uncounted = switch result {
        case .failure(let error) where stopped || nobodyReceives: error.receivedBytes
        case .success(let image) where nobodyReceives: image.failedBytes
        default: 0
        }
        // Outside the lock: the recorder calls its observers.
        if uncounted > 0, let usage { usage.recordFailedBytes(uncounted, on: network ?? NetworkState(.unknown)) }
        switch action {
        case .restart(let url, let load):
            start(url, load)
        case .resume(let waiters):
            for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        }
    }
}

extension ImagePipeline {
    /// `body`'s image or error, with `bytes` more received by attempts that failed before it
    /// (for the data usage: `FetchedImage.failedBytes`, `FetchError.receivedBytes`).
    fileprivate func adding(failedBytes bytes: Int,
                            _ body: () async throws(FetchError) -> FetchedImage) async throws(FetchError) -> FetchedImage {
        do {
            var image = try await body()
            image.failedBytes = saturatingSum(image.failedBytes, bytes)
            return image
        } catch {
            throw error.adding(receivedBytes: bytes)
        }
    }
}

extension FetchError {
    /// This error with `bytes` more received (a body refused after it arrived).
    func adding(receivedBytes bytes: Int) -> FetchError {
        var error = self
        error.receivedBytes = saturatingSum(receivedBytes, max(0, bytes))
        return error
    }
}

extension StoredImage {
    /// These bytes as a disk hit for `url`.
    fileprivate func image(_ url: ImageURL) -> FetchedImage {
        FetchedImage(url: url, bytes: bytes, source: .disk)
    }
}
