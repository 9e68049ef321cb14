import Dispatch
import Policy
import Locking

/// Loads images read-through: memory, then disk (a disk hit is copied into memory), then the
/// network (a download is written to both). It is also the policy's `CacheInspecting`: "is it
/// cached?" asks the memory cache and the disk cache's index, with no system call.
///
/// - Identical loads in flight share one transfer. Cancelling one waiter does not stop a transfer
///   others still wait for; cancelling the last one does.
/// - A failure is never cached, and frees its in-flight entry, so the next request retries at once.
/// - `purge()` (memory pressure) empties the memory cache and cancels prefetches nobody waits for.
/// - A download is delivered as soon as it arrives and is in the memory cache; it is written to
///   the disk cache right after, on a serial background queue, so that slow disks do not delay
///   images. `flush()` waits for those writes (call it before the process exits).
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

    private struct InFlight {
        let id: Int
        var task: Task<Void, Never>?
        var waiters: [Int: CheckedContinuation<FetchedImage, any Error>] = [:]
        var isPrefetch: Bool
    }

    private struct State {
        var inFlight: [ImageURL: InFlight] = [:]
        var nextID = 0
        /// Waiters cancelled before they were registered.
        var cancelledEarly: Set<Int> = []
        var downloads = 0
        var diskWriteFailures = 0
        var pendingDiskWrites = 0
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let diskWriter = DispatchQueue(label: "imgpolicy.disk-writer")

    // Guards the in-flight table and the counters.
    private let state = Locked(State())

    /// Creates a pipeline.
    public init(downloader: any ImageDownloading, memory: MemoryCache = MemoryCache(), disk: DiskCache?) {
        self.downloader = downloader
        self.memory = memory
        self.disk = disk
    }

    /// Whether `url` is in the memory cache or the disk cache's index.
    public func containsImage(at url: ImageURL) -> Bool {
        memory.containsImage(at: url) || (disk?.containsImage(at: url) ?? false)
    }

    /// The image at `url`, from the first of memory, disk and (when `networkAllowed`) the network
    /// that has it.
    /// - Throws: a `FetchError`: `.offline` when the network is not allowed and no cache has it,
    ///   `.cancelled` when the calling task is cancelled, or what the download failed with.
    public func image(for url: ImageURL, networkAllowed: Bool = true) async throws(FetchError) -> FetchedImage {
        if let bytes = memory.image(for: url) { return FetchedImage(url: url, bytes: bytes, source: .memory) }
        // A disk hit is read right here: no in-flight entry, no extra task.
        if let disk, disk.containsImage(at: url) || !networkAllowed, let bytes = disk.image(for: url) {
            memory.store(bytes, for: url)
            return FetchedImage(url: url, bytes: bytes, source: .disk)
        }
        guard networkAllowed else { throw FetchError(url: url, code: .offline) }
        let waiter = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    register(waiter, continuation, for: url)
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

    /// Starts loading `url` into the caches with nobody waiting; `purge()` cancels it if it is
    /// still running then.
    public func prefetch(_ url: ImageURL) {
        guard !containsImage(at: url) else { return }
        state.withLock { state in
            guard state.inFlight[url] == nil else { return }
            startLocked(&state, url: url, isPrefetch: true)
        }
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
        let tasks: [Task<Void, Never>] = state.withLock { state in
            var tasks: [Task<Void, Never>] = []
            for (url, entry) in state.inFlight where entry.waiters.isEmpty {
                if let task = entry.task { tasks.append(task) }
                state.inFlight[url] = nil
            }
            return tasks
        }
        for task in tasks { task.cancel() }
    }

    /// Loads in flight, downloads started so far, disk writes waiting, and disk writes that failed.
    public var statistics: (inFlight: Int, downloads: Int, pendingDiskWrites: Int, diskWriteFailures: Int) {
        state.withLock { ($0.inFlight.count, $0.downloads, $0.pendingDiskWrites, $0.diskWriteFailures) }
    }

    // MARK: - Waiters

    private func register(_ waiter: Int, _ continuation: CheckedContinuation<FetchedImage, any Error>, for url: ImageURL) {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelledEarly.remove(waiter) != nil { return true }
            if state.inFlight[url] == nil { startLocked(&state, url: url, isPrefetch: false) }
            state.inFlight[url]!.waiters[waiter] = continuation
            state.inFlight[url]!.isPrefetch = false
            return false
        }
        if cancelled { continuation.resume(throwing: FetchError(url: url, code: .cancelled)) }
    }

    private func cancelWaiter(_ waiter: Int, for url: ImageURL) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<FetchedImage, any Error>?, Task<Void, Never>?) in
            guard var entry = state.inFlight[url], let continuation = entry.waiters.removeValue(forKey: waiter) else {
                state.cancelledEarly.insert(waiter)
                return (nil, nil)
            }
            if entry.waiters.isEmpty {
                // The last waiter left: stop the transfer, and forget it so the next load starts afresh.
                state.inFlight[url] = nil
                return (continuation, entry.task)
            }
            state.inFlight[url] = entry
            return (continuation, nil)
        }
        task?.cancel()
        continuation?.resume(throwing: FetchError(url: url, code: .cancelled))
    }

    // MARK: - Loading

    private func startLocked(_ state: inout State, url: ImageURL, isPrefetch: Bool) {
        state.nextID += 1
        let id = state.nextID
        state.inFlight[url] = InFlight(id: id, task: nil, isPrefetch: isPrefetch)
        state.inFlight[url]!.task = Task { [self] in
            let result: Result<FetchedImage, FetchError>
            do throws(FetchError) {
                result = .success(try await fetch(url))
            } catch {
                result = .failure(error)
            }
            complete(url, id: id, with: result)
        }
    }

    private func fetch(_ url: ImageURL) async throws(FetchError) -> FetchedImage {
        if let bytes = disk?.image(for: url) {
            memory.store(bytes, for: url)
            return FetchedImage(url: url, bytes: bytes, source: .disk)
        }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        state.withLock { $0.downloads += 1 }
        let bytes = try await downloader.download(url)
        memory.store(bytes, for: url)
        if let disk { writeLater(bytes, for: url, to: disk) }
        return FetchedImage(url: url, bytes: bytes, source: .network)
    }

    /// Waits until every download so far is written to the disk cache.
    public func flush() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.pendingDiskWrites == 0 { return true }
                state.flushWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func writeLater(_ bytes: [UInt8], for url: ImageURL, to disk: DiskCache) {
        state.withLock { $0.pendingDiskWrites += 1 }
        diskWriter.async { [self] in
            var failed = false
            do { try disk.store(bytes, for: url) } catch { failed = true }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                if failed { state.diskWriteFailures += 1 }
                state.pendingDiskWrites -= 1
                guard state.pendingDiskWrites == 0 else { return [] }
                defer { state.flushWaiters.removeAll() }
                return state.flushWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    private func complete(_ url: ImageURL, id: Int, with result: Result<FetchedImage, FetchError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<FetchedImage, any Error>] in
            // The entry may already be gone (its last waiter cancelled) or replaced by a new load.
            guard let entry = state.inFlight[url], entry.id == id else { return [] }
            state.inFlight[url] = nil
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}
