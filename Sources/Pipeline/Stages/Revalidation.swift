import Logging
import Support
import Policy
import Transport
import Caching
import HTTPSemantics

/// The pipeline's stage of HTTP revalidation: it asks the server whether a stored entry is still
/// good (`If-None-Match`/`If-Modified-Since`), before the entry is shown (`revalidate`) or in the
/// background while the stale copy is shown (`revalidateInBackground`).
///
/// - A 304 keeps the stored bytes and renews their freshness on disk (source `.disk`: nothing was
///   downloaded); a 200 replaces them (`Download.accept`); a 304 that does not match the entry (or
///   finds it gone) is followed by a download without conditions. An entry without validators is
///   downloaded again.
/// - In the background: on a task of its own, at prefetch priority, once at a time per URL; what
///   each did is counted (`statistics`), and what it cost is counted into the background
///   recorder (`LinkAccounting`). `waitForRunning()` waits for those running at its call.
///
/// Thread safety: every member may be used from any thread at once.
final class Revalidation: Sendable {
    private struct State {
        /// URLs being revalidated in the background.
        var running: [ImageURL: Task<Void, Never>] = [:]
        var statistics = RevalidationStatistics()
    }

    let transfer: Download
    let disk: DiskCache?
    let memory: MemoryCache
    /// The threads disk reads run on.
    let readers: BlockingWorkPool
    let http: HTTPOptions
    let accounting: LinkAccounting
    private let logger: Logger
    // Guards the background revalidations running and the statistics.
    private let state = Locked(State())

    init(transfer: Download, disk: DiskCache?, memory: MemoryCache, readers: BlockingWorkPool, http: HTTPOptions,
         accounting: LinkAccounting, logger: Logger) {
        self.transfer = transfer
        self.disk = disk
        self.memory = memory
        self.readers = readers
        self.http = http
        self.accounting = accounting
        self.logger = logger
    }

    /// What the background revalidations did.
    var statistics: RevalidationStatistics {
        state.withLock { $0.statistics }
    }

    /// Asks the server whether `stored` is still good (see the type's comment).
    func revalidate(_ url: ImageURL, _ stored: StoredImage, priority: RequestPriority,
                    network: NetworkState?) async throws(FetchError) -> FetchedImage {
        let conditions = stored.freshness.conditionalHeaders
        guard !conditions.isEmpty, let disk else { return try await transfer.download(url, priority: priority, network: network) }
        let requestedAt = http.clock()
        let response = try await transfer.conditionalResponse(url, conditions: conditions, priority: priority, network: network)
        return try await adding(failedBytes: response.failedAttemptBytes) { () async throws(FetchError) in
            try await revalidated(url, stored, response, disk: disk, requestedAt: requestedAt, priority: priority, network: network)
        }
    }

    /// What the answer to a revalidation of `stored` makes of it (see `revalidate`).
    private func revalidated(_ url: ImageURL, _ stored: StoredImage, _ response: DownloadResponse, disk: DiskCache,
                             requestedAt: HTTPDate, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        guard response.status == 304 else { return try await transfer.accept(response, for: url, requestedAt: requestedAt) }
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
            return try await transfer.download(url, priority: priority, network: network)
        case .failure(let error):
            logger.warning("cannot record a revalidation", metadata: ["url": "\(url)", "path": "\(error.path)", "error": "\(error.message)"])
            memory.store(stored.bytes, for: url)
            return stored.image(url)
        }
    }

    /// Revalidates `url` on its own task, at prefetch priority, once at a time per URL; `variant`
    /// is what the load was for (nil: a URL without a decision), for the background recorder.
    func revalidateInBackground(_ url: ImageURL, _ stored: StoredImage, network: NetworkState?, variant: Variant?) {
        state.withLock { state in
            guard state.running[url] == nil else { return }
            state.statistics.started += 1
            // Created under the lock (nothing runs here), so that the task's own removal comes after.
            state.running[url] = Task { [self] in await run(url, stored, network: network, variant: variant) }
        }
    }

    private func run(_ url: ImageURL, _ stored: StoredImage, network: NetworkState?, variant: Variant?) async {
        let outcome: Result<FetchedImage, FetchError>
        do throws(FetchError) {
            outcome = .success(try await revalidate(url, stored, priority: RequestPriority(LoadPriority(.prefetch)), network: network))
        } catch {
            outcome = .failure(error)
        }
        state.withLock { state in
            state.running[url] = nil
            switch outcome {
            case .success(let image) where image.source == .network: state.statistics.replaced += 1
            case .success: state.statistics.notModified += 1
            case .failure: state.statistics.failed += 1
            }
        }
        // Outside the lock: the recorder calls its observers.
        accounting.recordBackgroundRevalidation(outcome, variant: variant, on: network)
    }

    /// Waits until the background revalidations running at this call have ended.
    func waitForRunning() async {
        let running = state.withLock { Array($0.running.values) }
        for revalidation in running { await revalidation.value }
    }
}
