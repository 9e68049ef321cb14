import CCurl
import Support
import Policy

import HTTPSemantics

/// What a response brought, read from its easy handle: its header fields, the judgment of its
/// body against held bytes, the reports to the transfer's checkpoints, the redirect target, the
/// timing, and the `DownloadResponse` made of it.
extension TransferDriver {
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

    /// Where a redirect response points (curl resolves a relative `Location`), if it says.
    func redirectTarget(of easy: UnsafeMutableRawPointer) -> String? {
        var target: UnsafeMutablePointer<CChar>?
        guard imgp_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &target) == CURLE_OK, let target else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: target, count: strlen(target)), as: UTF8.self)
    }

    /// The response with its header fields (of the last response, after redirects).
    func response(_ status: Int, body: [UInt8], of transfer: Transfer, easy: UnsafeMutableRawPointer) -> DownloadResponse {
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
    func header(_ name: String, of easy: UnsafeMutableRawPointer) -> String? {
        var found: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(easy, name, 0, UInt32(CURLH_HEADER), -1, &found) == CURLHE_OK,
              let value = found?.pointee.value else { return nil }
        return String(cString: value)
    }
}
