import CCurl
import Policy
import Locking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Downloads images with libcurl: one thread owns a curl multi handle and all its easy handles;
/// callers `await` their download, and cancelling the calling task removes the transfer at once.
///
/// Requests wait in a Swift queue until a connection slot is free (`maximumConnections` in all,
/// `maximumConnectionsPerHost` per scheme, host and port), so that a transfer's timeouts only start
/// when it really starts. Easy handles are reused (connections, DNS and TLS sessions with them);
/// HTTP/2 is used over TLS. Only http and https are allowed, also after redirects.
///
/// A response counts only if it is 2xx, complete (not shorter than its `Content-Length`),
/// non-empty, within `maximumBodySize`, and starts with the signature of an image format;
/// anything else is a `FetchError` saying what came back.
///
/// ```swift
/// let transport = CurlTransport()
/// let bytes = try await transport.download(ImageURL("https://example.com/a.png")!)
/// transport.shutdown()   // before the process exits
/// ```
public final class CurlTransport: ImageDownloading {
    /// The limits in force.
    public let configuration: TransportConfiguration

    /// A first-in, first-out list that removes from the front in O(1).
    private struct FIFO {
        private var items: [Transfer] = []
        private var head = 0

        var isEmpty: Bool { head == items.count }
        var count: Int { items.count - head }

        mutating func append(_ transfer: Transfer) { items.append(transfer) }

        mutating func popFirst() -> Transfer? {
            guard head < items.count else { return nil }
            let transfer = items[head]
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return transfer
        }

        /// Removes the transfers for which `shouldRemove` is true.
        mutating func removeAll(where shouldRemove: (Transfer) -> Bool) {
            items = Array(items[head...]).filter { !shouldRemove($0) }
            head = 0
        }
    }

    private struct Queue {
        var pendingByHost: [String: FIFO] = [:]
        var hostOrder: [String] = []
        var runningByHost: [String: Int] = [:]
        var running = 0
        var cancellations: [Transfer] = []
        var shuttingDown = false
        var stopped = false
        var suspended = false
    }

    // Guards the queue shared between callers and the transport thread.
    private let queue = Locked(Queue())
    private let multi: MultiHandle
    private let finished = Locked<Bool>(false)

    private static let globalInit: CURLcode = imgp_global_init()

    /// Starts the transport thread.
    public init(configuration: TransportConfiguration = .standard) {
        _ = Self.globalInit
        self.configuration = configuration
        multi = MultiHandle()
        let driver = TransferDriver(transport: self)
        Self.startThread { driver.run() }
    }

    /// Downloads `url`; see the type's documentation for what counts as a success.
    public func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        let transfer = Transfer(url: url, maximumBodySize: configuration.maximumBodySize)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.setContinuation(continuation)
                    enqueue(transfer)
                }
            } onCancel: {
                cancel(transfer)
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
        queue.withLock { $0.suspended = true }
    }

    /// Lets the held transfers start.
    public func resume() {
        queue.withLock { $0.suspended = false }
        curl_multi_wakeup(multi.pointer)
    }

    /// Transfers running and waiting: for statistics and tests.
    public var load: (running: Int, waiting: Int) {
        queue.withLock { queue in (queue.running, queue.pendingByHost.values.reduce(0) { $0 + $1.count }) }
    }

    /// Stops the transport thread after cancelling every transfer, and waits for it. Call it before
    /// the process exits (exiting with TLS transfers in flight can crash inside OpenSSL). Downloads
    /// asked for afterwards fail as cancelled.
    public func shutdown() {
        queue.withLock { $0.shuttingDown = true }
        curl_multi_wakeup(multi.pointer)
        while !queue.withLock({ $0.stopped }) { usleep(1000) }
    }

    // MARK: - Called by callers

    private func enqueue(_ transfer: Transfer) {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.shuttingDown else { return false }
            if queue.pendingByHost[transfer.hostKey] == nil {
                queue.pendingByHost[transfer.hostKey] = FIFO()
                queue.hostOrder.append(transfer.hostKey)
            }
            queue.pendingByHost[transfer.hostKey]!.append(transfer)
            return true
        }
        guard accepted else {
            transfer.finish(.failure(FetchError(url: transfer.url, code: .cancelled)))
            return
        }
        curl_multi_wakeup(multi.pointer)
    }

    private func cancel(_ transfer: Transfer) {
        transfer.markCancelled()
        queue.withLock { $0.cancellations.append(transfer) }
        curl_multi_wakeup(multi.pointer)
    }

    // MARK: - Called by the transport thread

    fileprivate var multiPointer: UnsafeMutableRawPointer { multi.pointer }

    /// Takes the cancellations and the transfers that may start now, counting them as running.
    fileprivate func takeWork() -> (start: [Transfer], cancel: [Transfer], shuttingDown: Bool) {
        queue.withLock { queue in
            var cancelledNow = queue.cancellations
            queue.cancellations.removeAll()
            // Cancelled transfers still waiting leave the queue without starting.
            if !cancelledNow.isEmpty || queue.shuttingDown {
                for host in queue.hostOrder {
                    queue.pendingByHost[host]?.removeAll { transfer in
                        let drop = transfer.isCancelled || queue.shuttingDown
                        if drop { cancelledNow.append(transfer) }
                        return drop
                    }
                }
            }
            var start: [Transfer] = []
            var progress = true
            while progress && queue.running < configuration.maximumConnections && !queue.shuttingDown && !queue.suspended {
                progress = false
                for host in queue.hostOrder where queue.running < configuration.maximumConnections {
                    guard queue.runningByHost[host, default: 0] < configuration.maximumConnectionsPerHost,
                          let transfer = queue.pendingByHost[host]?.popFirst() else { continue }
                    queue.running += 1
                    queue.runningByHost[host, default: 0] += 1
                    start.append(transfer)
                    progress = true
                }
            }
            queue.hostOrder.removeAll { host in
                let empty = queue.pendingByHost[host]?.isEmpty ?? true && queue.runningByHost[host, default: 0] == 0
                if empty { queue.pendingByHost[host] = nil; queue.runningByHost[host] = nil }
                return empty
            }
            return (start, cancelledNow, queue.shuttingDown)
        }
    }

    /// Counts a started transfer as no longer running.
    fileprivate func release(_ transfer: Transfer) {
        queue.withLock { queue in
            queue.running -= 1
            queue.runningByHost[transfer.hostKey, default: 1] -= 1
            if queue.runningByHost[transfer.hostKey] == 0, queue.pendingByHost[transfer.hostKey]?.isEmpty ?? true {
                queue.runningByHost[transfer.hostKey] = nil
                queue.pendingByHost[transfer.hostKey] = nil
                queue.hostOrder.removeAll { $0 == transfer.hostKey }
            }
        }
    }

    fileprivate func markStopped() {
        queue.withLock { $0.stopped = true }
    }

    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            // Written once before the thread starts; read once by the thread.
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        precondition(created == 0, "cannot start the transport thread")
    }
}

/// The curl multi handle; owned by the transport, used by its thread (and `curl_multi_wakeup`,
/// which libcurl documents as callable from any thread).
private final class MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    init() {
        pointer = curl_multi_init()!
        // Connections kept for reuse; the Swift queue does the limiting.
        _ = imgp_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, 64)
    }
}

/// What runs on the transport thread: starts, drives and finishes transfers.
private final class TransferDriver: @unchecked Sendable {
    // Everything here is used only on the transport thread.
    let transport: CurlTransport
    var active: [UInt: Transfer] = [:]
    var idleHandles: [UnsafeMutableRawPointer] = []

    init(transport: CurlTransport) {
        self.transport = transport
    }

    func run() {
        let multi = transport.multiPointer
        while true {
            let work = transport.takeWork()
            for transfer in work.cancel {
                if let easy = transfer.easy, active[UInt(bitPattern: easy)] != nil {
                    remove(transfer, result: .failure(FetchError(url: transfer.url, code: .cancelled)))
                } else {
                    transfer.finish(.failure(FetchError(url: transfer.url, code: .cancelled)))
                }
            }
            for transfer in work.start {
                if transfer.isCancelled {
                    transport.release(transfer)
                    transfer.finish(.failure(FetchError(url: transfer.url, code: .cancelled)))
                } else {
                    start(transfer)
                }
            }
            if work.shuttingDown {
                for transfer in Array(active.values) {
                    remove(transfer, result: .failure(FetchError(url: transfer.url, code: .cancelled)))
                }
                for easy in idleHandles { curl_easy_cleanup(easy) }
                idleHandles.removeAll()
                transport.markStopped()
                return
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            var finishedAny = false
            while let message = curl_multi_info_read(multi, &remaining) {
                var code = CURLE_OK
                guard let easy = imgp_message_done_handle(message, &code),
                      let transfer = active[key(easy)] else { continue }
                remove(transfer, result: result(of: transfer, easy: easy, code: code))
                finishedAny = true
            }
            // A finished transfer freed a connection slot: start the next ones before waiting.
            if finishedAny { continue }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func key(_ easy: UnsafeMutableRawPointer) -> UInt {
        UInt(bitPattern: easy)
    }

    private func start(_ transfer: Transfer) {
        let easy: UnsafeMutableRawPointer
        if let reused = idleHandles.popLast() {
            curl_easy_reset(reused)
            easy = reused
        } else {
            easy = curl_easy_init()!
        }
        transfer.easy = easy
        configure(easy, for: transfer)
        active[key(easy)] = transfer
        curl_multi_add_handle(transport.multiPointer, easy)
    }

    private func remove(_ transfer: Transfer, result: Result<[UInt8], FetchError>) {
        guard let easy = transfer.easy else { return }
        curl_multi_remove_handle(transport.multiPointer, easy)
        active[key(easy)] = nil
        transfer.easy = nil
        idleHandles.append(easy)
        transport.release(transfer)
        transfer.finish(result)
    }

    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer) {
        let configuration = transport.configuration
        func milliseconds(_ duration: Duration) -> Int {
            Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
        }
        _ = imgp_easy_setopt_string(easy, CURLOPT_URL, transfer.url.absoluteString)
        _ = imgp_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = imgp_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = imgp_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        _ = imgp_easy_setopt_long(easy, CURLOPT_MAXREDIRS, configuration.maximumRedirects)
        _ = imgp_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = imgp_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(configuration.connectTimeout))
        _ = imgp_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds(configuration.totalTimeout))
        _ = imgp_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedLimit)
        _ = imgp_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, milliseconds(configuration.lowSpeedTime) / 1000))
        _ = imgp_easy_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maximumBodySize))
        _ = imgp_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, configuration.verifiesTLS ? 1 : 0)
        _ = imgp_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, configuration.verifiesTLS ? 2 : 0)
        if let authorities = configuration.certificateAuthorities {
            _ = imgp_easy_setopt_string(easy, CURLOPT_CAINFO, authorities)
        }
        _ = imgp_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = imgp_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        _ = imgp_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        transfer.errorBuffer[0] = 0
        _ = imgp_easy_setopt_write_callback(easy) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            if transfer.isCancelled { return 0 }
            if transfer.body.count + length > transfer.maximumBodySize {
                transfer.tooLarge = true
                return 0
            }
            transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return length
        }
        // The transfer stays alive in `active` for as long as curl may call back with it.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque())
    }

    private func result(of transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Result<[UInt8], FetchError> {
        let url = transfer.url
        func fail(_ code: FetchError.Code) -> Result<[UInt8], FetchError> { .failure(FetchError(url: url, code: code)) }
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var declaredLength: curl_off_t = -1
        _ = imgp_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declaredLength)
        if transfer.isCancelled { return fail(.cancelled) }
        if transfer.tooLarge || code == CURLE_FILESIZE_EXCEEDED { return fail(.tooLarge(limit: transfer.maximumBodySize)) }
        let message = transfer.errorBuffer[0] != 0 ? String(cString: transfer.errorBuffer) : String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OK:
            break
        case CURLE_TOO_MANY_REDIRECTS:
            return fail(.redirectRefused("more than \(transport.configuration.maximumRedirects) redirects"))
        case CURLE_UNSUPPORTED_PROTOCOL:
            return fail(.redirectRefused("refused to follow a redirect or URL to a scheme other than http/https (\(message))"))
        case CURLE_PARTIAL_FILE:
            return fail(.truncated(expected: Int(declaredLength), received: transfer.body.count))
        default:
            return fail(.transport(curlCode: Int(code.rawValue), message: message))
        }
        guard (200..<300).contains(status) else { return fail(.httpStatus(status)) }
        guard !transfer.body.isEmpty else { return fail(.emptyBody) }
        if declaredLength >= 0 && transfer.body.count < Int(declaredLength) {
            return fail(.truncated(expected: Int(declaredLength), received: transfer.body.count))
        }
        guard ImageFormat.sniff(transfer.body) != nil else {
            var contentType: UnsafeMutablePointer<CChar>?
            _ = imgp_easy_getinfo_string(easy, CURLINFO_CONTENT_TYPE, &contentType)
            return fail(.notAnImage(contentType: contentType.map { String(cString: $0) },
                                    start: ImageFormat.describeStart(transfer.body)))
        }
        let body = transfer.body
        transfer.body = []
        return .success(body)
    }
}
