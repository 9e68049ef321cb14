import Policy
import HTTPSemantics

/// Downloads the bytes of an image. `CurlTransport` is the real one; tests of the pipeline may
/// use their own.
///
/// Thread safety: implementations must be safe to call from any task at once. Cancelling the
/// calling task must stop the download promptly and throw a `FetchError` with code `.cancelled`;
/// only a body that had fully arrived when the task was cancelled may still be returned (so that
/// it is cached rather than fetched again).
public protocol ImageDownloading: Sendable {
    /// The body of a 2xx response that is a complete, non-empty image.
    func download(_ url: ImageURL) async throws(FetchError) -> [UInt8]

    /// The same, at `priority`: the transport starts waiting transfers in priority order and
    /// reads `priority` again each time it chooses (see `RequestPriority`). The default ignores
    /// the priority.
    func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8]

    /// The server's answer to a request for `url` carrying `headers` (conditional, range, or
    /// content-negotiation fields), at `priority`: the status, the response header fields, the
    /// body and the times. 304 and 206 are answers (see `DownloadResponse`), not failures; every
    /// other status outside 2xx is a `FetchError`. `checkpoints`, if any, receives the body while
    /// it arrives and what arrived when the transfer stops early (see `BodyCheckpoints`). The
    /// default calls `download(_:priority:)` (ignoring `headers` and `checkpoints`) and answers
    /// 200 without header fields, received now.
    func response(for url: ImageURL, headers: [(name: String, value: String)],
                  priority: RequestPriority, checkpoints: BodyCheckpoints?) async throws(FetchError) -> DownloadResponse

    /// The answer to `request`: as `response(for:headers:priority:checkpoints:)`, and with
    /// `request.resuming` only the rest asked for and combined with the held bytes when (and
    /// only when) the server's `206` is the rest of the same version (`DownloadResponse.resumedBytes`),
    /// with `request.retries` limiting the retries. The default asks for the whole image with
    /// `response(for:headers:priority:checkpoints:)` (the resumption and the retry scope are not
    /// used: a downloader that does not resume never combines bytes).
    func response(to request: DownloadRequest) async throws(FetchError) -> DownloadResponse

    /// Holds downloads that have not started yet (while the user scrolls, say); those running
    /// go on. The default does nothing.
    func suspend()

    /// Lets held downloads start. The default does nothing.
    func resume()

    /// The network is back (reachability went from offline to online): downloads waiting to
    /// retry after a failure try again now instead of waiting out their backoff. `ImageLoader`
    /// and `ImageList` call it on that change; apps that drive a downloader themselves should too.
    /// The default does nothing.
    func networkReturned()
}

extension ImageDownloading {
    /// Downloads without regard to `priority`.
    public func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8] {
        try await download(url)
    }

    /// `download(_:priority:)`, answered as a 200 without header fields received now; `headers`
    /// are not sent (this downloader cannot send them).
    public func response(for url: ImageURL, headers: [(name: String, value: String)],
                         priority: RequestPriority, checkpoints: BodyCheckpoints?) async throws(FetchError) -> DownloadResponse {
        let requestedAt = HTTPDate.now()
        let body = try await download(url, priority: priority)
        return DownloadResponse(status: 200, body: body, requestedAt: requestedAt, receivedAt: HTTPDate.now())
    }

    /// The whole image for `request.url` with `request`'s header fields, priority and
    /// checkpoints; the resumption and the retry scope are not used.
    public func response(to request: DownloadRequest) async throws(FetchError) -> DownloadResponse {
        try await response(for: request.url, headers: request.headers, priority: request.priority, checkpoints: request.checkpoints)
    }

    /// `response(for:headers:priority:checkpoints:)` without checkpoints.
    public func response(for url: ImageURL, headers: [(name: String, value: String)],
                         priority: RequestPriority = RequestPriority()) async throws(FetchError) -> DownloadResponse {
        try await response(for: url, headers: headers, priority: priority, checkpoints: nil)
    }

    /// Does nothing: this downloader cannot hold downloads.
    public func suspend() {}

    /// Does nothing: this downloader cannot hold downloads.
    public func resume() {}

    /// Does nothing: this downloader does not retry.
    public func networkReturned() {}
}
