import CCurl
import Support
import Logging
import Policy

import HTTPSemantics

/// Downloads images with libcurl: one thread owns a curl multi handle and all its easy handles;
/// callers `await` their download, and cancelling the calling task removes the transfer at once.
///
/// Requests wait in a Swift queue until a connection slot is free (`maximumConnections` in all,
/// `maximumConnectionsPerHost` per scheme, host and port), so that a transfer's timeouts only start
/// when it really starts. They start most urgent first over all hosts (`download(_:priority:)`;
/// first in, first out among equals), and a host at its limit never holds back another host's
/// transfer. Requests queued in a burst start in priority order whatever order their tasks
/// reached the transport in: a request queued with a slot free waits until the burst has been
/// quiet for `gatheringWindow` (2 ms; at most four windows), unless it is at the top priority. A cancellation wakes the thread, which frees the slot and starts the next waiting
/// transfer at once. Easy handles are reused (connections, DNS and TLS sessions with them);
/// HTTP/2 is used over TLS. A request waits for a connection that may multiplex it (libcurl's
/// `CURLOPT_PIPEWAIT`) only where multiplexing can happen: over HTTPS while the host may offer
/// HTTP/2, never over plain HTTP nor to a host whose last answer came over HTTP/1.x, so that a
/// list's first screen on a new host sends all its requests at once. Redirects (at most `maximumRedirects`) are followed by the transport
/// itself, each target checked as an item's URL is (`ImageURL`: http or https only, no
/// credentials, a valid host and port) before it is requested.
///
/// A response counts only if it is 2xx, complete (not shorter than its `Content-Length`),
/// framed once (two `Content-Length` fields that differ are refused, and the connection is not
/// reused), non-empty, within `maximumBodySize`, starts with the signature of an image format,
/// and holds the whole image its format describes (`ImageCompleteness`: a `Content-Length`
/// smaller than the image, or a body ended by a closed connection, is refused); anything else is
/// a `FetchError` saying what came back. A complete image is delivered even if the waiting task
/// was cancelled just as it arrived. Bytes are never spliced from two versions: a resumed
/// request's `206` is combined with the held bytes only under `RangeResumption`'s rules, and a
/// retry after part of a body arrived asks for the rest under the same rules (see
/// `response(to:)`). The body bytes an attempt received before
/// it failed or was cancelled are reported, for the data usage: `FetchError.receivedBytes` (every
/// attempt of a download that failed), `DownloadResponse.failedAttemptBytes` (the attempts
/// retried before a success).
///
/// Lifecycle: a transport runs a thread until it is shut down. Call `shutdown()` (or, outside
/// async code, `syncShutdown()`) when done with it, and before the process exits (exiting with
/// TLS transfers in flight can crash inside OpenSSL); or use `withTransport`, which does it for
/// you. A transport deinitialised without a shutdown fails an assertion in debug builds; in
/// release builds its thread then stops by itself, but nobody waits for it.
///
/// Transient failures (connection errors, timeouts, a body cut short, 5xx, 408, 429) are retried
/// with exponential backoff and full jitter, or after the server's `Retry-After`, as
/// `configuration.retry` says (`RetryPolicy`), within the request's `RetryScope`;
/// `networkReturned()` ends the backoff waits at once.
///
/// A transport that cannot start (no file descriptor for its multi handle, no thread) is still
/// made: every download then fails with `FetchError.Code.outOfResources`, and its shutdown
/// returns at once. Nothing the environment decides traps.
///
/// Logging: each failed attempt at `info` (URL, reason, curl code, HTTP status), each retry at
/// `notice` (URL, attempt, delay, cause), cancellations at `debug`.
///
/// ```swift
/// let transport = CurlTransport(logger: logger)
/// let bytes = try await transport.download(ImageURL("https://example.com/a.png")!)
/// await transport.shutdown()
/// ```
///
/// In use: the `Fetch` guide “Getting Started”.
public final class CurlTransport: ImageDownloading {
    /// The limits in force.
    public let configuration: TransportConfiguration

    // Shared with the transport thread, which holds it (never `self`).
    let scheduler: TransferScheduler
    private let logger: Logger
    private let hooks: TransportHooks
    private let backoff = BackoffWaits()
    // Guards the counts of retries.
    private let statisticsState = Locked(TransportStatistics())
    /// Why the transport could not start (no multi handle, no thread): every download then fails
    /// with `FetchError.Code.outOfResources`, and a shutdown returns at once.
    private let startFailure: String?

    private static let globalInit: CURLcode = imgp_global_init()

    /// Starts the transport thread. `logger` receives failed transfers (`info`) and cancellations
    /// (`debug`); by default nothing is logged.
    public convenience init(configuration: TransportConfiguration = .standard, logger: Logger = .disabled) {
        self.init(configuration: configuration, logger: logger, hooks: TransportHooks())
    }

    /// Starts the transport thread, with test points.
    init(configuration: TransportConfiguration, logger: Logger, hooks: TransportHooks) {
        _ = Self.globalInit
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
        let multi = hooks.makeMultiHandle()
        var failure: String?
        if multi == nil {
            failure = "cannot start the transport: " + (errno == EMFILE || errno == ENFILE ? "too many open files" : "curl_multi_init failed")
        }
        scheduler = TransferScheduler(configuration: configuration, multi: multi, clock: hooks.gatheringClock)
        if let multi {
            // Connections kept for reuse; the Swift queue does the limiting.
            _ = imgp_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
            do {
                try TransferDriver(scheduler: scheduler, multi: multi, configuration: configuration, logger: logger, hooks: hooks).start()
            } catch {
                curl_multi_cleanup(multi)
                failure = "cannot start the transport thread: " + errnoText(error.code).lowercased()
            }
        }
        startFailure = failure
        if let failure {
            logger.error("transport not started", metadata: ["error": "\(failure)"])
            scheduler.stoppedWithoutThread()
        }
    }

    deinit {
        // Forgotten: stop the thread anyway (it cancels what is left and frees every handle), but
        // nobody can wait for it here.
        backoff.close()
        let wasRunning = scheduler.requestShutdown(nil) == .wakeThread
        if hooks.assertsShutdownBeforeDeinit {
            assert(!wasRunning, "CurlTransport deinitialised without shutdown(): call `await transport.shutdown()` (or syncShutdown()) when done with it")
        }
    }

    /// Runs `body` with a new transport and shuts the transport down afterwards, also when `body`
    /// throws.
    ///
    /// ```swift
    /// let bytes = try await CurlTransport.withTransport { try await $0.download(url) }
    /// ```
    public static func withTransport<Value, Failure: Error>(
        configuration: TransportConfiguration = .standard,
        logger: Logger = .disabled,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CurlTransport) async throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let transport = CurlTransport(configuration: configuration, logger: logger)
        let result: Result<Value, Failure>
        do throws(Failure) {
            result = .success(try await body(transport))
        } catch {
            result = .failure(error)
        }
        await transport.shutdown()
        return try result.get()
    }

    /// Downloads `url` at `.visible` priority; see `download(_:priority:)`.
    public func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        try await download(url, priority: RequestPriority(.visible))
    }

    /// Downloads `url`; see the type's documentation for what counts as a success.
    ///
    /// The transfer waits for a connection slot behind every more urgent one (over all hosts), and
    /// behind those of the same priority queued before it; `priority` is read again each time the
    /// transport chooses, so that setting it reorders the waiting transfer. A transient failure is
    /// retried as `configuration.retry` says, at the same priority; cancelling the task stops the
    /// transfer or the backoff wait at once.
    ///
    /// ```swift
    /// let priority = RequestPriority(LoadPriority(.near, order: 2))
    /// let load = Task { try await transport.download(url, priority: priority) }
    /// priority.value = LoadPriority(.visible, order: 0)   // the row scrolled onto the screen
    /// ```
    public func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8] {
        try await answer(to: DownloadRequest(url: url, priority: priority), returnsHeaders: false).wholeImage(of: url)
    }

    /// Requests `url` with the extra header fields `headers` (conditional, range, `Save-Data`,
    /// `Accept`…; a field holding a line break is not sent) and returns the answer: a complete
    /// image as in `download(_:priority:)`, a `304 Not Modified` (empty body), or a
    /// `206 Partial Content` to a `Range` among `headers` (the rest of a body, not checked to be
    /// an image: its start is elsewhere). Retried, prioritised and cancelled as
    /// `download(_:priority:)`. `checkpoints` receives the body while it arrives, and what arrived
    /// when an attempt is cancelled or fails.
    ///
    /// ```swift
    /// let answer = try await transport.response(for: url, headers: stored.freshness.conditionalHeaders,
    ///                                           priority: RequestPriority(), checkpoints: nil)
    /// ```
    public func response(for url: ImageURL, headers: [(name: String, value: String)],
                         priority: RequestPriority, checkpoints: BodyCheckpoints?) async throws(FetchError) -> DownloadResponse {
        try await answer(to: DownloadRequest(url: url, headers: headers, priority: priority, checkpoints: checkpoints), returnsHeaders: true)
    }

    /// The answer to `request`: as `response(for:headers:priority:checkpoints:)`, and
    ///
    /// - with `request.resuming`, the rest is asked for (`Range`, `If-Range`); a `206` that is the
    ///   rest of the same version is combined with the held bytes and answered as the whole
    ///   image (a `200`, `resumedBytes` the held count); a `206` for another version or range is
    ///   refused and the whole image asked for at once; a `200` is the whole image again.
    /// - an attempt that fails after part of a `200` with a strong validator and a
    ///   `Content-Length` arrived is retried by asking for the rest, under the same rules.
    /// - `request.retries` limits the retries: `.withoutRedownloading` makes none that would
    ///   download image bytes again, `.never` none at all.
    ///
    /// ```swift
    /// let answer = try await transport.response(to: DownloadRequest(url: url, resuming: disk.partial(for: url)))
    /// ```
    public func response(to request: DownloadRequest) async throws(FetchError) -> DownloadResponse {
        try await answer(to: request, returnsHeaders: true)
    }

    /// `response(to:)`, with the response's header fields only when `returnsHeaders`.
    ///
    /// Bytes: each attempt's body bytes are either part of the answer or counted as received for
    /// nothing (`failedAttemptBytes`, `FetchError.receivedBytes`); bytes held by a resumption
    /// are counted as nothing until it is clear whether the answer uses them.
    private func answer(to request: DownloadRequest, returnsHeaders: Bool) async throws(FetchError) -> DownloadResponse {
        let url = request.url
        if let startFailure { throw FetchError(url: url, code: .outOfResources(startFailure)) }
        var random = HookedRandom(bits: hooks.random)
        var attempt = 1
        // Body bytes received by the attempts that failed so far, for nothing (counted in the data usage).
        var failedBytes = 0
        var resumption = request.resuming.map { RangeResumption(held: $0) }
        while true {
            let generation = backoff.generation
            let (result, retryAfter, after) = await runAttempt(request, attempt: attempt, resumption: resumption, returnsHeaders: returnsHeaders)
            // The bytes of this load held by the resumption the attempt made.
            let carried = resumption?.receivedThisLoad ?? 0
            let failure: FetchError
            switch result {
            case .success(var answer):
                let combined = answer.resumedBytes > 0
                // Held bytes received by earlier attempts are downloaded bytes of this answer, not held.
                answer.resumedBytes = combined ? answer.resumedBytes - carried : 0
                answer.attempts = attempt
                answer.failedAttemptBytes = saturatingSum(failedBytes, combined ? 0 : carried)
                return answer
            case .failure(let error): failure = error
            }
            if failure.code == .cancelled || Task.isCancelled {
                throw FetchError(url: url, code: .cancelled, attempts: attempt, receivedBytes: saturatingSum(failedBytes, saturatingSum(failure.receivedBytes, carried)))
            }
            // What the next attempt can resume from; the rest of what came is lost.
            let next = after.resumption
            failedBytes = saturatingSum(failedBytes, max(0, carried + failure.receivedBytes - (next?.receivedThisLoad ?? 0)))
            if let refusal = after.refusal {
                // A 206 (or 416) that cannot complete the held bytes: ask for the whole image at
                // once (not a retry of a failure: nothing of the image came).
                logger.info("a resumed request was answered for another version or range: asking for the whole image",
                            metadata: ["url": "\(url)", "why": "\(refusal)"])
                resumption = nil
                continue
            }
            let lost = after.receivedImageBytes && next == nil || after.heldBytesDropped && carried > 0
            let scopeAllows = switch request.retries {
            case .asConfigured: true
            case .withoutRedownloading: !lost
            case .never: false
            }
            let verdict = scopeAllows ? configuration.retry.next(after: failure.code, attempt: attempt, retryAfter: retryAfter, using: &random) : .giveUp
            guard case .retry(let delay, let serverAsked) = verdict else {
                if attempt > 1 { statisticsState.withLock { $0.failedAfterRetries += 1 } }
                // The bytes a resumption still held are received for nothing now.
                throw FetchError(url: url, code: failure.code, attempts: attempt,
                                 receivedBytes: saturatingSum(failedBytes, next?.receivedThisLoad ?? 0))
            }
            resumption = next
            logger.notice("retrying transfer", metadata: [
                "url": "\(url)", "attempt": "\(attempt + 1) of \(configuration.retry.attempts)",
                "delay": "\(delay)", "cause": "\(failure.reason)",
                "resumingFrom": "\(next?.held.offset ?? 0)",
            ])
            do {
                try await backoff.wait(delay, on: hooks.clock, orNetworkReturnAfter: serverAsked ? nil : generation)
            } catch {
                logger.debug("transfer cancelled", metadata: ["url": "\(url)", "stage": "while it waited to retry"])
                throw FetchError(url: url, code: .cancelled, attempts: attempt,
                                 receivedBytes: saturatingSum(failedBytes, next?.receivedThisLoad ?? 0))
            }
            statisticsState.withLock { $0.retries += 1 }
            attempt += 1
        }
    }

    /// One attempt: the result, the wait its response asked for with `Retry-After`, and what a
    /// failure leaves for the next attempt.
    private func runAttempt(_ request: DownloadRequest, attempt: Int, resumption: RangeResumption?,
                            returnsHeaders: Bool) async -> (Result<DownloadResponse, FetchError>, RetryAfter?, Transfer.AfterFailure) {
        let url = request.url
        let transfer = Transfer(url: url, maximumBodySize: configuration.maximumBodySize, priority: request.priority,
                                headers: request.headers, returnsHeaders: returnsHeaders, resumption: resumption)
        transfer.checkpoints = request.checkpoints
        transfer.freshConnection = attempt > 1
        transfer.nextCheckpoint = request.checkpoints.map { transfer.body.count + $0.every } ?? Int.max
        let scheduler = self.scheduler
        do {
            let body = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.setContinuation(continuation)
                    if transfer.isCancelled {
                        transfer.finish(.failure(FetchError(url: url, code: .cancelled)))
                    } else if !scheduler.enqueue(transfer) {
                        // Asked for after a shutdown: its own code, not a cancellation.
                        transfer.finish(.failure(FetchError(url: url, code: .alreadyShutdown)))
                    }
                }
            } onCancel: {
                scheduler.cancel(transfer)
            }
            return (.success(body), nil, Transfer.AfterFailure())
        } catch let error as FetchError {
            return (.failure(error), transfer.retryAfter, transfer.afterFailure)
        } catch {
            return (.failure(FetchError(url: url, code: .cancelled)), nil, transfer.afterFailure)
        }
    }

    /// Ends every backoff wait at once, so that downloads waiting to retry try again now. Call it
    /// when reachability reports the network back (offline to online). A wait for a server's
    /// `Retry-After` is not shortened: the server, not the network, asked for it.
    public func networkReturned() {
        backoff.networkReturned()
    }

    /// Retries made and given up, since the transport started.
    public var statistics: TransportStatistics {
        statisticsState.withLock { $0 }
    }

    /// Holds transfers that have not started: they wait in the queue (and can still be cancelled)
    /// until `resume()`. Running transfers go on. For scrolling: start nothing new while the user
    /// drags a list, then load what is on screen when it stops.
    public func suspend() {
        scheduler.setSuspended(true)
    }

    /// Lets the held transfers start.
    public func resume() {
        scheduler.setSuspended(false)
    }

    /// Transfers running and waiting at one moment.
    public struct Load: Sendable, Equatable {
        /// Transfers on a connection.
        public var running: Int
        /// Transfers waiting for one.
        public var waiting: Int

        /// Creates a read-out.
        public init(running: Int, waiting: Int) {
            self.running = running
            self.waiting = waiting
        }
    }

    /// Transfers running and waiting: for statistics and tests.
    public var load: Load {
        let (running, waiting) = scheduler.load
        return Load(running: running, waiting: waiting)
    }

    /// Cancels every transfer (their downloads throw `.cancelled`, also those waiting to retry),
    /// stops the transport thread and
    /// frees every curl handle; returns when that is done. Downloads asked for afterwards fail at
    /// once with `FetchError.Code.alreadyShutdown` (not `.cancelled`: nobody cancelled them). Calling it again, or concurrently, is harmless: every call returns once
    /// the transport has stopped.
    public func shutdown() async {
        let scheduler = self.scheduler
        backoff.close()
        await withCheckedContinuation { continuation in
            scheduler.requestShutdown(.task(continuation))
        }
    }

    /// `shutdown()` for code that is not async (the end of a synchronous `main`, a `deinit` of an
    /// owner): blocks the calling thread until the transport has stopped.
    @available(*, noasync, message: "syncShutdown() blocks the calling thread; use `await shutdown()`", renamed: "shutdown()")
    public func syncShutdown() {
        let signal = ThreadSignal()
        backoff.close()
        scheduler.requestShutdown(.thread(signal))
        signal.wait()
    }
}
