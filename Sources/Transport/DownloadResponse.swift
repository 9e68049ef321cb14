import Policy
import HTTPSemantics

/// What a server answered to one download: the status, the response header fields, the body and
/// the wall-clock times the request was sent and the response received (for HTTP freshness).
///
/// Statuses: 2xx with a complete image; `304 Not Modified` to a conditional request (an empty
/// body: the caller's cached bytes are the image, never this empty body); `206 Partial Content`
/// to a `Range` request (the rest of a body, not an image by itself).
///
/// ```swift
/// let response = try await transport.response(for: url, headers: [("If-None-Match", "\"v1\"")])
/// if response.status == 304 { /* keep the cached bytes, refresh their freshness */ }
/// ```
public struct DownloadResponse: Sendable {
    /// The HTTP status of the last response (after redirects).
    public var status: Int
    /// The response header fields of the last response, in the order received.
    public var headers: [(name: String, value: String)]
    /// The body: an image for 2xx other than 206, the requested rest for 206, empty for 304.
    public var body: [UInt8]
    /// When the request was sent (wall clock).
    public var requestedAt: HTTPDate
    /// When the response was received (wall clock).
    public var receivedAt: HTTPDate
    /// libcurl's figures for the transfer (body bytes of this request, total time, time to the
    /// first byte), for `LinkEstimator`; a 304's are marked `fromCache`. Nil when the downloader
    /// does not measure (`CurlTransport` always does).
    public var timing: TransferTiming?
    /// Attempts made for this answer: 1, or more when transient failures were retried first.
    public var attempts: Int
    /// Body bytes received by the attempts that failed before this answer (retried transient
    /// failures: a body cut short, an error page…): received, but not part of `body`. Counted by
    /// `DataUsageRecorder` as bytes of failed attempts (through `FetchedImage.failedBytes`).
    public var failedAttemptBytes: Int
    /// Bytes at the start of `body` that were not downloaded for this answer: the held bytes of
    /// `DownloadRequest.resuming` that the server's `206` completed (0 when it sent the whole
    /// body, or nothing was held).
    public var resumedBytes = 0
    /// Whether `body` was checked to be a whole image (its signature and `ImageCompleteness`) by
    /// the downloader: `CurlTransport` checks every whole-body answer.
    package var wholeImageChecked = false

    /// A response; a negative `failedAttemptBytes` counts as 0.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8],
                requestedAt: HTTPDate, receivedAt: HTTPDate, timing: TransferTiming? = nil, attempts: Int = 1,
                failedAttemptBytes: Int = 0) {
        self.timing = timing
        self.attempts = max(1, attempts)
        self.failedAttemptBytes = max(0, failedAttemptBytes)
        self.status = status
        self.headers = headers
        self.body = body
        self.requestedAt = requestedAt
        self.receivedAt = receivedAt
    }

    /// The value of the header field `name` (case-insensitive), the first if several.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The body of a whole image (any 2xx but 206): a 304 or a 206 given to a caller that did
    /// not ask for one is a `FetchError` with its status, never an empty or partial image.
    package func wholeImage(of url: ImageURL) throws(FetchError) -> [UInt8] {
        guard status != 304, status != 206 else { throw FetchError(url: url, code: .httpStatus(status)) }
        return body
    }
}
