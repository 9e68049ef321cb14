import Logging
import Locking
import Policy

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
public final class ImagePipeline: CacheInspecting {
    /// The downloader.
    public let downloader: any ImageDownloading
    /// The memory cache.
    public let memory: MemoryCache
    /// The disk cache, if any.
    public let disk: DiskCache?
    /// Where failed loads, failed disk writes and dropped writes are reported.
    public let logger: Logger

    private typealias Table = LoadTable<CheckedContinuation<FetchedImage, any Error>, Task<Void, Never>>

    private struct State {
        var table = Table()
        var downloads = 0
    }

    // Guards the table of loads and waiters, and the download count.
    private let state = Locked(State())
    /// The threads disk reads run on.
    let readers = DiskThreads(label: "imgpolicy.disk-reader", width: 2)
    /// The disk writes' queue and thread.
    let writes: DiskWriteQueue?

    /// Creates a pipeline; `diskWrites` bounds the queue of disk-cache writes.
    public init(downloader: any ImageDownloading, memory: MemoryCache = MemoryCache(), disk: DiskCache?,
                diskWrites: DiskWritePolicy = .dropWhenFull, logger: Logger = .disabled) {
        self.downloader = downloader
        self.memory = memory
        self.disk = disk
        self.logger = logger
        writes = disk.map { DiskWriteQueue(disk: $0, policy: diskWrites, logger: logger) }
    }

    /// Whether `url` is in the memory cache or the disk cache's index.
    public func containsImage(at url: ImageURL) -> Bool {
        memory.containsImage(at: url) || (disk?.containsImage(at: url) ?? false)
    }

    /// The image at `url`, from the first of memory, disk and (when `networkAllowed`) the network
    /// that has it.
    ///
    /// `priority` is this call's priority (a new `.visible` one when nil): keep it to change it
    /// while the call waits, with `setPriority(_:of:)`.
    /// - Throws: a `FetchError`: `.offline` when the network is not allowed and no cache has it,
    ///   `.cancelled` when the calling task is cancelled, or what the download failed with.
    public func image(for url: ImageURL, networkAllowed: Bool = true,
                      priority: RequestPriority? = nil) async throws(FetchError) -> FetchedImage {
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        if disk?.containsImage(at: url) == true || !networkAllowed, let image = await diskImage(for: url) {
            return image
        }
        guard networkAllowed else { throw FetchError(url: url, code: .offline) }
        let priority = priority ?? RequestPriority()
        let waiter = state.withLock { $0.table.makeWaiter(for: url, priority: priority) }
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
        return await diskImage(for: url)
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

    /// Loads in flight, downloads started so far, disk writes waiting, and disk writes that failed.
    public var statistics: (inFlight: Int, downloads: Int, pendingDiskWrites: Int, diskWriteFailures: Int) {
        let (inFlight, downloads) = state.withLock { ($0.table.loads.count, $0.downloads) }
        let writes = self.writes?.statistics ?? (pending: 0, written: 0, failed: 0, dropped: 0)
        return (inFlight, downloads, writes.pending, writes.failed)
    }

    /// Disk writes queued or running, written, failed, and dropped because the queue was full.
    public var diskWriteStatistics: (pending: Int, written: Int, failed: Int, dropped: Int) {
        writes?.statistics ?? (pending: 0, written: 0, failed: 0, dropped: 0)
    }

    /// The disk writes that failed so far, one per distinct message (the first 100 messages): the
    /// first failure with that message (it names the path) and how many writes failed so.
    public var diskWriteFailures: [(error: DiskCacheError, occurrences: Int)] {
        writes?.failures ?? []
    }

    /// Loads in flight and calls waiting for them: both zero when no call is running and every
    /// load has ended. For tests and diagnostics.
    public var bookkeeping: (loads: Int, waiters: Int) {
        state.withLock { ($0.table.loads.count, $0.table.waiterCount) }
    }

    /// Waits until every disk write queued before this call has ended (not for writes queued
    /// later: steady traffic cannot keep it waiting).
    public func flush() async {
        await writes?.flush()
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
        let priority = state.withLock { $0.table.requestPriority(of: url) } ?? RequestPriority()
        let task = Task { [self] in
            let result: Result<FetchedImage, FetchError>
            do throws(FetchError) {
                result = .success(try await fetch(url, priority: priority))
            } catch {
                result = .failure(error)
            }
            finish(url, load, with: result)
        }
        state.withLock { $0.table.started(url, load, handle: task) }?.cancel()
    }

    private func fetch(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> FetchedImage {
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        // Also finds entries other processes wrote since the index was built.
        if let image = await diskImage(for: url) { return image }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        state.withLock { $0.downloads += 1 }
        let bytes: [UInt8]
        do {
            bytes = try await downloader.download(url, priority: priority)
        } catch {
            if error.code != .cancelled {
                logger.warning("download failed", metadata: ["url": "\(url)", "error": "\(error)"])
            }
            throw error
        }
        // A complete body is kept whoever still waits: memory first, then the disk queue.
        memory.store(bytes, for: url)
        await writes?.enqueue(bytes, for: url)
        return FetchedImage(url: url, bytes: bytes, source: .network)
    }

    private func diskImage(for url: ImageURL) async -> FetchedImage? {
        guard let disk else { return nil }
        guard let bytes = await readers.run({ disk.image(for: url) }) else { return nil }
        memory.store(bytes, for: url)
        return FetchedImage(url: url, bytes: bytes, source: .disk)
    }

    private func finish(_ url: ImageURL, _ load: Table.LoadID, with result: Result<FetchedImage, FetchError>) {
        let stopped = if case .failure(let error) = result, error.code == .cancelled { true } else { false }
        switch state.withLock({ $0.table.finished(url, load, stopped: stopped) }) {
        case .restart(let url, let load):
            start(url, load)
        case .resume(let waiters):
            for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        }
    }
}
