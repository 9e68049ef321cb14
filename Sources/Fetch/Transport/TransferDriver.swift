import CCurl
import Locking
import Logging
import Policy

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What runs on the transport thread: it owns the curl multi handle and every easy handle, starts,
/// drives, cancels and finishes transfers, and frees every handle when the transport shuts down.
///
/// Each turn of its loop: stop the cancelled transfers (which frees their connection slots), stop
/// for good if a shutdown was asked for, start what may start now, let curl work, finish what
/// curl completed (and turn again at once if anything finished, since that freed a slot), else
/// wait in `curl_multi_poll` until a socket is ready, curl's next timer, or a wake-up (a new
/// transfer, a cancellation, `resume()`, a shutdown).
final class TransferDriver: @unchecked Sendable {
    // Everything below is used only on the transport thread, once `start()` has run.
    private let scheduler: TransferScheduler
    private let multi: UnsafeMutableRawPointer
    private let configuration: TransportConfiguration
    private let logger: Logger
    private let hooks: TransportHooks
    private var active: [UInt: Transfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []

    init(scheduler: TransferScheduler, multi: UnsafeMutableRawPointer, configuration: TransportConfiguration,
         logger: Logger, hooks: TransportHooks) {
        self.scheduler = scheduler
        self.multi = multi
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
    }

    /// Starts the thread, which keeps this driver (not the transport) until it has stopped.
    func start() {
        do {
            try OwnedThread.detached { [self] in run() }
        } catch {
            preconditionFailure("cannot start the transport thread: \(error.code)")
        }
    }

    private func run() {
        while true {
            let work = scheduler.takeCancellations()
            for transfer in work.cancel { stopCancelled(transfer) }
            if work.stop {
                stop()
                return
            }
            // A slot freed here (a transfer cancelled before it started, or that could not start)
            // is filled on the next turn, without waiting: no enqueue wakes the thread for it.
            var freedAny = false
            for transfer in scheduler.takeStartable() {
                if transfer.isCancelled {
                    scheduler.release(transfer)
                    conclude(transfer, .cancelled(transfer, stage: "before it started"))
                    freedAny = true
                } else if !start(transfer) {
                    freedAny = true
                }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            var finishedAny = false
            while let message = curl_multi_info_read(multi, &remaining) {
                var code = CURLE_OK
                guard let easy = imgp_message_done_handle(message, &code),
                      let transfer = active[key(easy)] else { continue }
                hooks.transferCompleted?(transfer.url)
                remove(transfer, outcome: outcome(of: transfer, easy: easy, code: code))
                finishedAny = true
            }
            // A finished transfer freed a connection slot: start the next ones before waiting.
            if finishedAny || freedAny { continue }
            curl_multi_poll(multi, nil, 0, hooks.pollTimeoutMilliseconds, nil)
        }
    }

    /// Cancels every transfer, frees every handle, then lets the shutdown's waiters go on.
    private func stop() {
        for transfer in Array(active.values) {
            remove(transfer, outcome: .cancelled(transfer, stage: "by the transport's shutdown"))
        }
        for easy in idleHandles { curl_easy_cleanup(easy) }
        scheduler.openHandles.subtract(idleHandles.count, ordering: .relaxed)
        idleHandles.removeAll()
        // From here on nobody wakes the multi handle (see `TransferScheduler.wake`).
        let waiters = scheduler.threadStopped()
        curl_multi_cleanup(multi)
        scheduler.openHandles.subtract(1, ordering: .releasing)
        logger.debug("transport stopped")
        for waiter in waiters { waiter.resume() }
    }

    private func key(_ easy: UnsafeMutableRawPointer) -> UInt {
        UInt(bitPattern: easy)
    }

    /// A transfer marked cancelled: removed from curl if it runs, else (still waiting, or already
    /// finished) only its waiter is told, once.
    private func stopCancelled(_ transfer: Transfer) {
        if let easy = transfer.easy, active[key(easy)] != nil {
            remove(transfer, outcome: .cancelled(transfer, stage: "while it ran"))
        } else if transfer.isUnfinished {
            conclude(transfer, .cancelled(transfer, stage: "before it started"))
        }
    }

    /// Starts `transfer` in curl; false if it could not start (it is then finished with the error).
    ///
    /// A handle that ran an earlier transfer is reused as it is: it keeps the options every
    /// transfer shares (set once, by `configureHandle`), and only the transfer's own are set
    /// (`configure(_:for:)`), rather than `curl_easy_reset` and some 20 options set again per
    /// transfer.
    private func start(_ transfer: Transfer) -> Bool {
        let easy: UnsafeMutableRawPointer
        if let reused = idleHandles.popLast() {
            easy = reused
        } else if let fresh = curl_easy_init() {
            scheduler.openHandles.add(1, ordering: .relaxed)
            configureHandle(fresh)
            easy = fresh
        } else {
            scheduler.release(transfer)
            conclude(transfer, Outcome(transfer, .transport(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue),
                                                            message: "curl_easy_init failed")))
            return false
        }
        transfer.easy = easy
        configure(easy, for: transfer)
        active[key(easy)] = transfer
        curl_multi_add_handle(multi, easy)
        return true
    }

    /// Tells the transfer's checkpoints what arrived so far (status and header fields included).
    static func report(_ transfer: Transfer, easy: UnsafeMutableRawPointer, isFinal: Bool) {
        guard let checkpoints = transfer.checkpoints, !transfer.body.isEmpty else { return }
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        checkpoints.handler(BodyCheckpoints.Partial(status: status, headers: headerFields(of: easy), body: transfer.body, isFinal: isFinal))
    }

    /// The header fields of the last response received (after redirects).
    static func headerFields(of easy: UnsafeMutableRawPointer) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        var previous: UnsafeMutablePointer<curl_header>?
        while let field = curl_easy_nextheader(easy, UInt32(CURLH_HEADER), -1, previous) {
            if let name = field.pointee.name, let value = field.pointee.value {
                headers.append((String(cString: name), String(cString: value)))
            }
            previous = field
        }
        return headers
    }

    /// Takes a running transfer out of curl, frees its slot and tells its waiter (after a last
    /// report of the body received to its checkpoints, when it stopped early).
    private func remove(_ transfer: Transfer, outcome: Outcome) {
        guard let easy = transfer.easy else { return }
        if case .failure = outcome.result { TransferDriver.report(transfer, easy: easy, isFinal: true) }
        curl_multi_remove_handle(multi, easy)
        active[key(easy)] = nil
        transfer.easy = nil
        // The idle handle keeps no pointer into the transfer, which may be freed now.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, nil)
        if transfer.requestHeaders != nil { _ = imgp_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, nil) }
        idleHandles.append(easy)
        scheduler.release(transfer)
        conclude(transfer, outcome)
    }

    /// Logs the outcome and resumes the waiting task (outside every lock).
    private func conclude(_ transfer: Transfer, _ outcome: Outcome) {
        switch outcome.result {
        case .success:
            break
        case .failure(let error) where error.code == .cancelled:
            logger.debug("transfer cancelled", metadata: ["url": "\(transfer.url)", "stage": "\(outcome.stage ?? "")"])
        case .failure(let error):
            var metadata: Logger.Metadata = ["url": "\(transfer.url)", "error": "\(error.reason)"]
            if let curlCode = outcome.curlCode { metadata["curl.code"] = "\(curlCode)" }
            if let status = outcome.httpStatus { metadata["http.status"] = "\(status)" }
            logger.info("transfer failed", metadata: metadata)
        }
        transfer.finish(outcome.result)
    }

    /// The options every transfer of this transport shares, set once on a new handle.
    private func configureHandle(_ easy: UnsafeMutableRawPointer) {
        func milliseconds(_ duration: Duration) -> Int {
            Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
        }
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
        // No check of the cancel flag here: a cancelled transfer is removed by the thread between
        // two turns, and whatever curl completes before that is delivered (see `outcome`).
        _ = imgp_easy_setopt_write_callback(easy) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let (length, overflow) = size.multipliedReportingOverflow(by: count)
            transfer.receivedBytes = saturatingSum(transfer.receivedBytes, overflow ? 0 : length)
            if overflow || length > transfer.maximumBodySize - transfer.body.count {
                transfer.tooLarge = true
                return 0
            }
            transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            if transfer.body.count >= transfer.nextCheckpoint, let checkpoints = transfer.checkpoints, let easy = transfer.easy {
                transfer.nextCheckpoint = transfer.body.count + checkpoints.every
                TransferDriver.report(transfer, easy: easy, isFinal: false)
            }
            return length
        }
    }

    /// The options of this transfer: every one that differs between transfers is set here, each
    /// time (a handle is reused without `curl_easy_reset`).
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer) {
        _ = imgp_easy_setopt_string(easy, CURLOPT_URL, transfer.url.absoluteString)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        // Set or cleared: the previous transfer on this handle may have had extra header fields.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, transfer.requestHeaders.map { UnsafeMutableRawPointer($0) })
        transfer.requestedAt = HTTPDate.now()
        transfer.errorBuffer[0] = 0
        // The transfer stays alive in `active` for as long as curl may call back with it.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque())
    }

    /// What a completed transfer brought. A complete, valid image is a success even when its
    /// waiter was cancelled at that instant (the body arrived: the pipeline caches it rather than
    /// fetch it again); any other result of a cancelled transfer is `.cancelled`.
    private func outcome(of transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Outcome {
        var outcome = verdict(on: transfer, easy: easy, code: code)
        if case .failure = outcome.result, transfer.isCancelled {
            outcome = .cancelled(transfer, stage: "as it completed")
        }
        return outcome
    }

    private func verdict(on transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Outcome {
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var declaredLength: curl_off_t = -1
        _ = imgp_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declaredLength)
        let curlCode = Int(code.rawValue)
        func fail(_ failure: FetchError.Code) -> Outcome {
            Outcome(transfer, failure, curlCode: curlCode, httpStatus: status == 0 ? nil : status)
        }
        if transfer.tooLarge || code == CURLE_FILESIZE_EXCEEDED { return fail(.tooLarge(limit: transfer.maximumBodySize)) }
        let message = transfer.errorBuffer[0] != 0 ? String(cString: transfer.errorBuffer) : String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OK:
            break
        case CURLE_TOO_MANY_REDIRECTS:
            return fail(.redirectRefused("more than \(configuration.maximumRedirects) redirects"))
        case CURLE_UNSUPPORTED_PROTOCOL where status == 0:
            // libcurl says the same when the answer has no HTTP status line (HTTP/0.9 to it,
            // refused): no status was read, so no redirect was followed.
            return fail(.transport(curlCode: curlCode, message: "not an HTTP response: the answer does not start with an HTTP status line (\(message))"))
        case CURLE_UNSUPPORTED_PROTOCOL:
            return fail(.redirectRefused("refused to follow a redirect or URL to a scheme other than http/https (\(message))"))
        case CURLE_OUT_OF_MEMORY where status != 0 && transfer.body.isEmpty:
            // libcurl's header buffer refuses a header field over 100 KiB with "Out of memory".
            return fail(.transport(curlCode: curlCode, message: "a response header is too large (a header field longer than libcurl's limit of 100 KiB)"))
        case CURLE_RECV_ERROR where message.hasPrefix("Too large response headers"):
            return fail(.transport(curlCode: curlCode, message: "the response's header fields are too large (\(message))"))
        case CURLE_PARTIAL_FILE:
            return fail(.truncated(expected: Int(declaredLength), received: transfer.body.count))
        default:
            return fail(.transport(curlCode: curlCode, message: message))
        }
        // 304 answers a conditional request: no body, the caller's cached bytes are the image.
        if status == 304 { return Outcome(result: .success(response(status, body: [], of: transfer, easy: easy))) }
        guard (200..<300).contains(status) else {
            transfer.retryAfter = header("Retry-After", of: easy).flatMap { RetryAfter(header: $0, responseDate: header("Date", of: easy)) }
            return fail(.httpStatus(status))
        }
        guard !transfer.body.isEmpty else { return fail(.emptyBody) }
        if declaredLength >= 0 && transfer.body.count < Int(declaredLength) {
            return fail(.truncated(expected: Int(declaredLength), received: transfer.body.count))
        }
        // 206 brings the rest of a body, whose start is elsewhere: it cannot be sniffed.
        guard status == 206 || ImageFormat.sniff(transfer.body) != nil else {
            var contentType: UnsafeMutablePointer<CChar>?
            _ = imgp_easy_getinfo_string(easy, CURLINFO_CONTENT_TYPE, &contentType)
            return fail(.notAnImage(contentType: contentType.map { String(cString: $0) },
                                    start: ImageFormat.describeStart(transfer.body)))
        }
        let body = transfer.body
        transfer.body = []
        return Outcome(result: .success(response(status, body: body, of: transfer, easy: easy)))
    }

    /// The response with its header fields (of the last response, after redirects).
    private func response(_ status: Int, body: [UInt8], of transfer: Transfer, easy: UnsafeMutableRawPointer) -> DownloadResponse {
        var response = DownloadResponse(status: status, headers: transfer.returnsHeaders ? TransferDriver.headerFields(of: easy) : [], body: body,
                                        requestedAt: transfer.requestedAt, receivedAt: HTTPDate.now())
        response.timing = Self.timing(of: easy, fromCache: status == 304)
        return response
    }

    /// libcurl's figures for the transfer that just completed on `easy` (this request's body bytes,
    /// total time and time to the first byte), for the link estimate; nil when libcurl gives none.
    static func timing(of easy: UnsafeMutableRawPointer, fromCache: Bool) -> TransferTiming? {
        var bytes: curl_off_t = 0, total: curl_off_t = 0, firstByte: curl_off_t = 0
        guard imgp_easy_getinfo_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &bytes) == CURLE_OK,
              imgp_easy_getinfo_offset(easy, CURLINFO_TOTAL_TIME_T, &total) == CURLE_OK,
              imgp_easy_getinfo_offset(easy, CURLINFO_STARTTRANSFER_TIME_T, &firstByte) == CURLE_OK else { return nil }
        return TransferTiming(bodyBytes: Int64(bytes), totalMicroseconds: Int64(total), firstByteMicroseconds: Int64(firstByte),
                              fromCache: fromCache)
    }

    /// The value of the response header `name` (of the last response, after redirects), if any.
    private func header(_ name: String, of easy: UnsafeMutableRawPointer) -> String? {
        var found: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(easy, name, 0, UInt32(CURLH_HEADER), -1, &found) == CURLHE_OK,
              let value = found?.pointee.value else { return nil }
        return String(cString: value)
    }
}

/// How a transfer ended, with what the log needs to say why.
private struct Outcome {
    var result: Result<DownloadResponse, FetchError>
    var curlCode: Int?
    var httpStatus: Int?
    /// For a cancellation: when it happened.
    var stage: String?

    init(result: Result<DownloadResponse, FetchError>, curlCode: Int? = nil, httpStatus: Int? = nil, stage: String? = nil) {
        self.result = result
        self.curlCode = curlCode
        self.httpStatus = httpStatus
        self.stage = stage
    }

    /// A failure, with the body bytes the transfer received (for the data usage).
    init(_ transfer: Transfer, _ failure: FetchError.Code, curlCode: Int? = nil, httpStatus: Int? = nil) {
        self.init(result: .failure(FetchError(url: transfer.url, code: failure, receivedBytes: transfer.receivedBytes)),
                  curlCode: curlCode, httpStatus: httpStatus)
    }

    /// A cancellation, with the body bytes the transfer received before it (for the data usage).
    static func cancelled(_ transfer: Transfer, stage: String) -> Outcome {
        Outcome(result: .failure(FetchError(url: transfer.url, code: .cancelled, receivedBytes: transfer.receivedBytes)), stage: stage)
    }
}
