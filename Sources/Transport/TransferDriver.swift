import CCurl
import Support
import Logging
import Policy

import HTTPSemantics

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
    /// The hosts whose requests wait for multiplexing (`CURLOPT_PIPEWAIT`), from the HTTP version
    /// of their answers.
    private var multiplexing = MultiplexingHosts()

    init(scheduler: TransferScheduler, multi: UnsafeMutableRawPointer, configuration: TransportConfiguration,
         logger: Logger, hooks: TransportHooks) {
        self.scheduler = scheduler
        self.multi = multi
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
    }

    /// Starts the thread, which keeps this driver (not the transport) until it has stopped.
    /// - Throws: when the system refuses a thread (the caller then frees the multi handle).
    func start() throws(OwnedThread.StartFailure) {
        try hooks.startThread { [self] in run() }
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
            let (startable, gatheringFor) = scheduler.takeStartable()
            for transfer in startable {
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
                noteHTTPVersion(of: easy, url: transfer.currentURL)
                switch completion(of: transfer, easy: easy, code: code) {
                case .finished(let outcome):
                    hooks.transferCompleted?(transfer.url)
                    remove(transfer, outcome: outcome)
                    finishedAny = true
                case .redirect(let target):
                    if !follow(transfer, to: target, easy: easy) { finishedAny = true }
                }
            }
            // A finished transfer freed a connection slot: start the next ones before waiting.
            if finishedAny || freedAny { continue }
            // While transfers are being gathered, wait no longer than the gathering.
            curl_multi_poll(multi, nil, 0, min(hooks.pollTimeoutMilliseconds, gatheringFor ?? .max), nil)
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
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            remove(transfer, outcome: Outcome(transfer, .outOfResources(TransferFailure.resourceMessage("cannot start a transfer", added))))
            return false
        }
        return true
    }

    /// Restarts `transfer` at `target`, the redirect its response asked for (already checked as
    /// an image URL); false if it could not go on (it is then finished with the error).
    private func follow(_ transfer: Transfer, to target: ImageURL, easy: UnsafeMutableRawPointer) -> Bool {
        curl_multi_remove_handle(multi, easy)
        transfer.currentURL = target
        transfer.redirects += 1
        transfer.body = transfer.resumption?.held.bytes ?? []
        transfer.reportedLength = 0
        transfer.answer = .awaiting
        transfer.contentLengths = []
        _ = imgp_easy_setopt_string(easy, CURLOPT_URL, target.absoluteString)
        setPipeWait(easy, for: target)
        transfer.errorBuffer[0] = 0
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            // Out of curl's own hands: the handle is no longer in the multi handle.
            remove(transfer, outcome: Outcome(transfer, .outOfResources(TransferFailure.resourceMessage("cannot follow a redirect", added))))
            return false
        }
        return true
    }

    /// Whether a request to `url` waits for a connection that may multiplex it: only where that
    /// can happen (`MultiplexingHosts`: never for `http://`, for `https://` while the host may
    /// offer HTTP/2).
    private func setPipeWait(_ easy: UnsafeMutableRawPointer, for url: ImageURL) {
        let waits = multiplexing.waitsForMultiplexing(Transfer.hostKey(of: url.absoluteString))
        _ = imgp_easy_setopt_long(easy, CURLOPT_PIPEWAIT, waits ? 1 : 0)
    }

    /// Notes the HTTP version of the answer `easy` received (to `url`), if one came.
    private func noteHTTPVersion(of easy: UnsafeMutableRawPointer, url: ImageURL) {
        var version = 0
        guard imgp_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK else { return }
        multiplexing.note(Transfer.hostKey(of: url.absoluteString), curlHTTPVersion: version)
    }

    /// Tells the transfer's checkpoints what arrived since the last report (status and header
    /// fields included). A body combined with held bytes is reported as the 200 it completes
    /// (`RangeResumption`), the held bytes counting as reported; an error page, or a body not
    /// judged yet, is not reported.
    static func report(_ transfer: Transfer, easy: UnsafeMutableRawPointer, isFinal: Bool) {
        guard let checkpoints = transfer.checkpoints, transfer.body.count > transfer.reportedLength else { return }
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let headers: [(name: String, value: String)]
        switch transfer.answer {
        case .whole:
            headers = headerFields(of: easy)
        case .combined:
            headers = transfer.resumption?.combinedHeaders(headerFields(of: easy)) ?? []
            status = 200
        case .awaiting, .error, .refused:
            return
        }
        let offset = transfer.reportedLength
        let bytes = Array(transfer.body[offset...])
        transfer.reportedLength = transfer.body.count
        checkpoints.handler(BodyCheckpoints.Partial(status: status, headers: headers, bytes: bytes, offset: offset, isFinal: isFinal))
    }

    /// Judges the body of the response `transfer` receives, at its first bytes (or at its end
    /// when it has none): with held bytes, whether to combine them with it
    /// (`RangeResumption.judge`); the held bytes are dropped unless they are combined.
    static func judge(_ transfer: Transfer, easy: UnsafeMutableRawPointer) {
        guard transfer.answer == .awaiting else { return }
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        guard let resumption = transfer.resumption else {
            transfer.answer = (200..<300).contains(status) ? .whole : .error
            return
        }
        switch resumption.judge(status: status, headers: headerFields(of: easy)) {
        case .combine:
            transfer.answer = .combined
            transfer.reportedLength = resumption.held.bytes.count
        case .wholeBodyInstead:
            transfer.body.removeAll(keepingCapacity: true)
            transfer.answer = .whole
        case .notAboutTheBody:
            transfer.body.removeAll(keepingCapacity: true)
            transfer.answer = .error
        case .refuse(let why):
            transfer.body.removeAll(keepingCapacity: true)
            transfer.answer = .refused(why)
        }
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
        if case .failure = outcome.result {
            TransferDriver.report(transfer, easy: easy, isFinal: true)
            transfer.afterFailure = afterFailure(of: transfer, easy: easy)
        }
        curl_multi_remove_handle(multi, easy)
        active[key(easy)] = nil
        transfer.easy = nil
        // The idle handle keeps no pointer into the transfer, which may be freed now.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, nil)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, nil)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, nil)
        if transfer.requestHeaders != nil { _ = imgp_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, nil) }
        idleHandles.append(easy)
        scheduler.release(transfer)
        conclude(transfer, outcome)
    }

    /// What a failed attempt of `transfer` leaves for the next one (see `Transfer.AfterFailure`).
    private func afterFailure(of transfer: Transfer, easy: UnsafeMutableRawPointer) -> Transfer.AfterFailure {
        var after = Transfer.AfterFailure()
        switch transfer.answer {
        case .whole, .combined:
            after.receivedImageBytes = transfer.receivedBytes > 0
            var status = 0
            _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            let carried = transfer.answer == .combined ? transfer.resumption?.receivedThisLoad ?? 0 : 0
            let combined = transfer.answer == .combined
            let headers = combined ? transfer.resumption?.combinedHeaders(TransferDriver.headerFields(of: easy)) ?? [] : TransferDriver.headerFields(of: easy)
            let heldFromDisk = combined ? (transfer.resumption?.held.bytes.count ?? 0) - carried : 0
            after.resumption = RangeResumption.ofFailedAttempt(status: combined ? 200 : status, headers: headers, body: transfer.body,
                                                              receivedThisLoad: transfer.body.count - heldFromDisk, now: HTTPDate.now())
            after.heldBytesDropped = transfer.resumption != nil && !combined
        case .refused(let why):
            after.heldBytesDropped = true
            after.refusal = why
        case .awaiting, .error:
            // Nothing of the image came: the held bytes, if any, are still good.
            after.resumption = transfer.resumption
        }
        return after
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
        // Redirects are followed here, not by curl, so that each target gets the checks an item's
        // URL gets (`ImageURL`: no credentials, http/https only…) before it is requested.
        _ = imgp_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
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
        // HTTP/2 is offered over TLS only; `CURLOPT_PIPEWAIT` is set per request (`configure`).
        _ = imgp_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = imgp_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent)
        // No check of the cancel flag here: a cancelled transfer is removed by the thread between
        // two turns, and whatever curl completes before that is delivered (see `outcome`).
        _ = imgp_easy_setopt_write_callback(easy) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let (length, overflow) = size.multipliedReportingOverflow(by: count)
            transfer.receivedBytes = saturatingSum(transfer.receivedBytes, overflow ? 0 : length)
            if transfer.answer == .awaiting, let easy = transfer.easy { TransferDriver.judge(transfer, easy: easy) }
            // A refused resumption or a response whose framing is in doubt: stop at once (curl
            // then closes the connection rather than reuse it).
            if case .refused = transfer.answer { return 0 }
            if case .conflicting = ContentLengthVerdict(transfer.contentLengths) { return 0 }
            if overflow || length > transfer.maximumBodySize - transfer.body.count {
                transfer.tooLarge = true
                return 0
            }
            transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            transfer.responseBodyBytes += length
            if transfer.answer != .error, case .length(let declared) = ContentLengthVerdict(transfer.contentLengths),
               transfer.responseBodyBytes == declared, case .incomplete = transfer.completeness(), let easy = transfer.easy {
                // A Content-Length shorter than the image: the rest may follow in the connection,
                // where the next response on it would be read from (RFC 9112 §6.3).
                _ = imgp_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1)
            }
            if transfer.body.count >= transfer.nextCheckpoint, let checkpoints = transfer.checkpoints, let easy = transfer.easy {
                transfer.nextCheckpoint = transfer.body.count + checkpoints.every
                TransferDriver.report(transfer, easy: easy, isFinal: false)
            }
            return length
        }
        // Sockets are made here, so that a socket refused for want of descriptors is told apart
        // from a server that refused the connection (curl reports both as "Couldn't connect").
        _ = imgp_easy_setopt_opensocket_callback(easy) { context, family, type, proto in
            let made = DescriptorReserve.admit(socket(family, type | Int32(SOCK_CLOEXEC.rawValue), proto))
            if made < 0, let context {
                Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().socketErrno = errno
            }
            return made
        }
        // Each response header line: a status line starts a response (a redirect's, an interim
        // 1xx's, the last one); its `Content-Length` lines are kept to be checked against each
        // other. Two that differ forbid reusing the connection (RFC 9112 §6.3: its framing is
        // unknown).
        _ = imgp_easy_setopt_header_callback(easy) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let (length, overflow) = size.multipliedReportingOverflow(by: count)
            guard !overflow, let data else { return 0 }
            let line = UnsafeRawBufferPointer(start: data, count: length)
            if line.starts(with: "HTTP/".utf8) {
                transfer.contentLengths = []
                transfer.responseBodyBytes = 0
                transfer.judgedCompleteness = nil
            } else if line.count > 15, line.prefix(15).map({ $0 | 0x20 }).elementsEqual("content-length:".utf8) {
                let value = String(decoding: line.dropFirst(15).filter { ![0x20, 0x09, 0x0D, 0x0A].contains($0) }, as: UTF8.self)
                if transfer.contentLengths.count < 100 { transfer.contentLengths.append(value) }
                if case .conflicting = ContentLengthVerdict(transfer.contentLengths), let easy = transfer.easy {
                    _ = imgp_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1)
                }
            }
            return length
        }
    }

    /// The options of this transfer: every one that differs between transfers is set here, each
    /// time (a handle is reused without `curl_easy_reset`).
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer) {
        _ = imgp_easy_setopt_string(easy, CURLOPT_URL, transfer.currentURL.absoluteString)
        setPipeWait(easy, for: transfer.currentURL)
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        // Set by the header callback when a response's framing was in doubt.
        _ = imgp_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 0)
        _ = imgp_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, transfer.freshConnection ? 1 : 0)
        // Set or cleared: the previous transfer on this handle may have had extra header fields.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, transfer.requestHeaders.map { UnsafeMutableRawPointer($0) })
        transfer.requestedAt = HTTPDate.now()
        transfer.errorBuffer[0] = 0
        // The transfer stays alive in `active` for as long as curl may call back with it.
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque())
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, Unmanaged.passUnretained(transfer).toOpaque())
        _ = imgp_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(transfer).toOpaque())
    }

    /// What a completed transfer brings: its outcome, or a redirect to follow.
    private enum Completion {
        case finished(Outcome)
        case redirect(ImageURL)
    }

    /// What a completed transfer brought. A complete, valid image is a success even when its
    /// waiter was cancelled at that instant (the body arrived: the pipeline caches it rather than
    /// fetch it again); any other result of a cancelled transfer is `.cancelled`, and a cancelled
    /// transfer follows no redirect.
    private func completion(of transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Completion {
        var completion = verdict(on: transfer, easy: easy, code: code)
        if transfer.isCancelled {
            switch completion {
            case .finished(let outcome) where (try? outcome.result.get()) != nil: break
            default: completion = .finished(.cancelled(transfer, stage: "as it completed"))
            }
        }
        return completion
    }

    private func verdict(on transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Completion {
        var status = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var declaredLength: curl_off_t = -1
        _ = imgp_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declaredLength)
        let curlCode = Int(code.rawValue)
        func fail(_ failure: FetchError.Code) -> Completion {
            .finished(Outcome(transfer, failure, curlCode: curlCode, httpStatus: status == 0 ? nil : status))
        }
        if code == CURLE_OK || code == CURLE_PARTIAL_FILE { TransferDriver.judge(transfer, easy: easy) }
        if case .refused(let why) = transfer.answer { return fail(TransferFailure.resumptionRefused(why, curlCode: curlCode)) }
        let check = TransferBodyCheck(transfer, declaredLength: Int(declaredLength), limitExceeded: code == CURLE_FILESIZE_EXCEEDED)
        if let failure = check.framingFailure() { return fail(failure) }
        let message = TransferFailure.message(of: transfer, code: code)
        if let failure = TransferFailure.code(for: code, status: status, message: message, check: check, of: transfer, easy: easy) {
            return fail(failure)
        }
        if [301, 302, 303, 307, 308].contains(status), let target = redirectTarget(of: easy) {
            guard transfer.redirects < configuration.maximumRedirects else {
                return fail(.redirectRefused("more than \(configuration.maximumRedirects) redirects"))
            }
            guard let url = ImageURL(target) else {
                let problem = ImageURL.problem(with: target) ?? "not an image URL"
                return fail(.redirectRefused("refused to follow a redirect to a URL that is not allowed: \(problem)"))
            }
            return .redirect(url)
        }
        // 304 answers a conditional request: no body, the caller's cached bytes are the image.
        if status == 304 { return .finished(Outcome(result: .success(response(status, body: [], of: transfer, easy: easy)))) }
        guard (200..<300).contains(status) else {
            transfer.retryAfter = header("Retry-After", of: easy).flatMap { RetryAfter(header: $0, responseDate: header("Date", of: easy)) }
            return fail(.httpStatus(status))
        }
        if let failure = check.lengthFailure() { return fail(failure) }
        let combined = check.combined
        // A 206 to a caller's own range request brings the rest of a body, whose start is
        // elsewhere: it cannot be sniffed nor checked whole.
        if status != 206 || combined {
            guard ImageFormat.sniff(transfer.body) != nil else {
                var contentType: UnsafeMutablePointer<CChar>?
                _ = imgp_easy_getinfo_string(easy, CURLINFO_CONTENT_TYPE, &contentType)
                return fail(.notAnImage(contentType: contentType.map { String(cString: $0) },
                                        start: ImageFormat.describeStart(transfer.body)))
            }
            if case .incomplete(let detail) = transfer.completeness() { return fail(.incompleteImage(detail)) }
        }
        let body = transfer.body
        transfer.body = []
        var answer = response(combined ? 200 : status, body: body, of: transfer, easy: easy)
        if combined, let resumption = transfer.resumption {
            if transfer.returnsHeaders { answer.headers = resumption.combinedHeaders(answer.headers) }
            answer.resumedBytes = resumption.held.bytes.count
        }
        answer.wholeImageChecked = status != 206 || combined
        return .finished(Outcome(result: .success(answer)))
    }

    /// Where a redirect response points (curl resolves a relative `Location`), if it says.
    private func redirectTarget(of easy: UnsafeMutableRawPointer) -> String? {
        var target: UnsafeMutablePointer<CChar>?
        guard imgp_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &target) == CURLE_OK, let target else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: target, count: strlen(target)), as: UTF8.self)
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
