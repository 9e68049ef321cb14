import CCurl
import Support

/// How a transfer's failure reads as a `FetchError`: libcurl's result code, with what the transfer
/// saw (the HTTP status, libcurl's error buffer, the socket's errno), translated into the failure
/// a caller is told and can act on (`.truncated`, `.outOfResources`, `.redirectRefused`…), never
/// libcurl's own wording alone where it would mislead.
///
/// `TransferDriver` asks it once a transfer completes; the status, redirects and body checks
/// (`TransferBodyCheck`) stay the driver's.
enum TransferFailure {
    /// libcurl's words for `code` on `transfer`: its error buffer when libcurl wrote one there,
    /// else `curl_easy_strerror`.
    static func message(of transfer: Transfer, code: CURLcode) -> String {
        transfer.errorBuffer[0] != 0 ? String(cString: transfer.errorBuffer) : String(cString: curl_easy_strerror(code))
    }

    /// The failure libcurl's `code` means for `transfer` on `easy`, whose last response had
    /// `status` (0: no status line read) and whose body `check` describes; nil for `CURLE_OK`.
    static func code(for code: CURLcode, status: Int, message: String, check: TransferBodyCheck,
                     of transfer: Transfer, easy: UnsafeMutableRawPointer) -> FetchError.Code? {
        let curlCode = Int(code.rawValue)
        switch code {
        case CURLE_OK:
            return nil
        case CURLE_UNSUPPORTED_PROTOCOL where status == 0:
            // libcurl says the same when the answer has no HTTP status line (HTTP/0.9 to it,
            // refused): no status was read, so no redirect was followed.
            return .transport(curlCode: curlCode, message: "not an HTTP response: the answer does not start with an HTTP status line (\(message))")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .redirectRefused("refused to follow a redirect or URL to a scheme other than http/https (\(message))")
        case CURLE_OUT_OF_MEMORY where status != 0 && transfer.body.isEmpty:
            // libcurl's header buffer refuses a header field over 100 KiB with "Out of memory".
            return .transport(curlCode: curlCode, message: "a response header is too large (a header field longer than libcurl's limit of 100 KiB)")
        case CURLE_RECV_ERROR where message.hasPrefix("Too large response headers"):
            return .transport(curlCode: curlCode, message: "the response's header fields are too large (\(message))")
        case CURLE_PARTIAL_FILE:
            return check.cutShort()
        default:
            if let exhausted = exhaustedResource(transfer, easy: easy, message: message) { return .outOfResources(exhausted) }
            return .transport(curlCode: curlCode, message: message)
        }
    }

    /// The failure of a resumed request whose answer cannot complete the bytes held (`why`:
    /// `RangeResumption.judge`'s reason), with libcurl's `curlCode`.
    static func resumptionRefused(_ why: String, curlCode: Int) -> FetchError.Code {
        .transport(curlCode: curlCode, message: "the server's answer to a resumed request cannot complete the bytes held: \(why)")
    }

    /// What ran out, when a transfer failed because the process has no descriptor left (a socket
    /// that could not be made, libcurl that could not be loaded): curl's own message would say
    /// "Couldn't connect to server" or "install libcurl4". Nil for any other failure.
    static func exhaustedResource(_ transfer: Transfer, easy: UnsafeMutableRawPointer, message: String) -> String? {
        var osErrno = 0
        _ = imgp_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        let socketErrno = Int(transfer.socketErrno)
        if socketErrno == Int(EMFILE) || socketErrno == Int(ENFILE) || osErrno == Int(EMFILE) || osErrno == Int(ENFILE) {
            return "cannot open a connection: too many open files"
        }
        if socketErrno == Int(ENOBUFS) || socketErrno == Int(ENOMEM) { return "cannot open a connection: out of memory" }
        if message.hasPrefix("libcurl could not be loaded: out of memory") { return message }
        guard message.lowercased().contains("too many open files") else { return nil }
        return imgp_curl_is_loaded() == 0 ? "libcurl could not be loaded: too many open files" : "out of file descriptors: \(message)"
    }

    /// `what` failed with the multi handle's `code`, and errno, in words.
    static func resourceMessage(_ what: String, _ code: CURLMcode) -> String {
        let cause = errno == EMFILE || errno == ENFILE ? "too many open files" : code == CURLM_OUT_OF_MEMORY ? "out of memory" : "curl refused it"
        return "\(what): \(cause) (curl multi code \(code.rawValue))"
    }
}
