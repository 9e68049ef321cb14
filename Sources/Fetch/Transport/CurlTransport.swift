import CCurl
import Logging
import Policy

/// Downloads images with libcurl: one thread owns a curl multi handle and all its easy handles;
/// callers `await` their download, and cancelling the calling task removes the transfer at once.
///
/// Requests wait in a Swift queue until a connection slot is free (`maximumConnections` in all,
/// `maximumConnectionsPerHost` per scheme, host and port), so that a transfer's timeouts only start
/// when it really starts. A cancellation wakes the thread, which frees the slot and starts the next
/// waiting transfer at once. Easy handles are reused (connections, DNS and TLS sessions with them);
/// HTTP/2 is used over TLS. Only http and https are allowed, also after redirects.
///
/// A response counts only if it is 2xx, complete (not shorter than its `Content-Length`),
/// non-empty, within `maximumBodySize`, and starts with the signature of an image format;
/// anything else is a `FetchError` saying what came back. A complete image is delivered even if
/// the waiting task was cancelled just as it arrived.
///
/// Lifecycle: a transport runs a thread until it is shut down. Call `shutdown()` (or, outside
/// async code, `syncShutdown()`) when done with it, and before the process exits (exiting with
/// TLS transfers in flight can crash inside OpenSSL); or use `withTransport`, which does it for
/// you. A transport deinitialised without a shutdown fails an assertion in debug builds; in
/// release builds its thread then stops by itself, but nobody waits for it.
///
/// Logging: each failed transfer at `info` (URL, reason, curl code, HTTP status), cancellations
/// at `debug`.
///
/// ```swift
/// let transport = CurlTransport(logger: logger)
/// let bytes = try await transport.download(ImageURL("https://example.com/a.png")!)
/// await transport.shutdown()
/// ```
///
/// ## See Also
///
/// - <doc:GettingStarted>
public final class CurlTransport: ImageDownloading {
    /// The limits in force.
    public let configuration: TransportConfiguration

    // Shared with the transport thread, which holds it (never `self`).
    let scheduler: TransferScheduler
    private let logger: Logger
    private let hooks: TransportHooks

    private static let globalInit: CURLcode = imgp_global_init()

    /// Starts the transport thread. `logger` receives failed transfers (`info`) and cancellations
    /// (`debug`); by default nothing is logged.
    public convenience init(configuration: TransportConfiguration = .standard, logger: Logger = .disabled) {
        self.init(configuration: configuration, logger: logger, hooks: TransportHooks())
    }

    /// Starts the transport thread, with test points.
    init(configuration: TransportConfiguration, logger: Logger, hooks: TransportHooks) {
        _ = Self.globalInit
        guard let multi = curl_multi_init() else { preconditionFailure("curl_multi_init failed") }
        // Connections kept for reuse; the Swift queue does the limiting.
        _ = imgp_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
        scheduler = TransferScheduler(configuration: configuration, multi: multi)
        TransferDriver(scheduler: scheduler, multi: multi, configuration: configuration, logger: logger, hooks: hooks).start()
    }

    deinit {
        // Forgotten: stop the thread anyway (it cancels what is left and frees every handle), but
        // nobody can wait for it here.
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

    /// Downloads `url`; see the type's documentation for what counts as a success.
    public func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        let transfer = Transfer(url: url, maximumBodySize: configuration.maximumBodySize)
        let scheduler = self.scheduler
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.setContinuation(continuation)
                    if transfer.isCancelled || !scheduler.enqueue(transfer) {
                        transfer.finish(.failure(FetchError(url: url, code: .cancelled)))
                    }
                }
            } onCancel: {
                scheduler.cancel(transfer)
            }
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError(url: url, code: .cancelled)
        }
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

    /// Transfers running and waiting: for statistics and tests.
    public var load: (running: Int, waiting: Int) {
        scheduler.load
    }

    /// Cancels every transfer (their downloads throw `.cancelled`), stops the transport thread and
    /// frees every curl handle; returns when that is done. Downloads asked for afterwards fail as
    /// cancelled at once. Calling it again, or concurrently, is harmless: every call returns once
    /// the transport has stopped.
    public func shutdown() async {
        let scheduler = self.scheduler
        await withCheckedContinuation { continuation in
            scheduler.requestShutdown(.task(continuation))
        }
    }

    /// `shutdown()` for code that is not async (the end of a synchronous `main`, a `deinit` of an
    /// owner): blocks the calling thread until the transport has stopped.
    @available(*, noasync, message: "syncShutdown() blocks the calling thread; use `await shutdown()`", renamed: "shutdown()")
    public func syncShutdown() {
        let signal = ThreadSignal()
        scheduler.requestShutdown(.thread(signal))
        signal.wait()
    }
}
