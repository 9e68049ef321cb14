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
///
/// Its files: this one drives the transfers; `TransferDriver+HandleOptions.swift` sets curl's
/// options on a handle, `TransferDriver+Responses.swift` reads what a response brought;
/// `TransferFailure` says what a failure means as a `FetchError`, `TransferBodyCheck` checks the
/// body's framing, size and length.
final class TransferDriver: @unchecked Sendable {
    // Everything below is used only on the transport thread, once `start()` has run.
    private let scheduler: TransferScheduler
    private let multi: UnsafeMutableRawPointer
    let configuration: TransportConfiguration
    private let logger: Logger
    private let hooks: TransportHooks
    private var active: [UInt: Transfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// The hosts whose requests wait for multiplexing (`CURLOPT_PIPEWAIT`), from the HTTP version
    /// of their answers.
    var multiplexing = MultiplexingHosts()

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

    /// Notes the HTTP version of the answer `easy` received (to `url`), if one came.
    private func noteHTTPVersion(of easy: UnsafeMutableRawPointer, url: ImageURL) {
        var version = 0
        guard imgp_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK else { return }
        multiplexing.note(Transfer.hostKey(of: url.absoluteString), curlHTTPVersion: version)
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
