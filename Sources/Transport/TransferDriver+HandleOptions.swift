import CCurl
import Support
import Policy

import HTTPSemantics

/// The options of curl's easy handles: those every transfer of the transport shares, set once on
/// a new handle, and those of one transfer, set each time a handle is reused.
extension TransferDriver {
    /// Whether a request to `url` waits for a connection that may multiplex it: only where that
    /// can happen (`MultiplexingHosts`: never for `http://`, for `https://` while the host may
    /// offer HTTP/2).
    func setPipeWait(_ easy: UnsafeMutableRawPointer, for url: ImageURL) {
        let waits = multiplexing.waitsForMultiplexing(Transfer.hostKey(of: url.absoluteString))
        _ = imgp_easy_setopt_long(easy, CURLOPT_PIPEWAIT, waits ? 1 : 0)
    }

    /// The options every transfer of this transport shares, set once on a new handle.
    func configureHandle(_ easy: UnsafeMutableRawPointer) {
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
    func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer) {
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
}
