import Logging
import Support
import Policy
import Transport
import Caching
import HTTPSemantics

/// The pipeline's stage that downloads: it asks the downloader for an image, with the
/// negotiation headers for the load's link (`Save-Data`, the network hints, `Accept`) and its
/// retries; checks the answer is a whole image of an accepted format; keeps it in memory and
/// queues it for the disk with its freshness (`no-store`: never written). With a disk cache the
/// download is resumable (`PartialBodies`). Each response is measured (`LinkAccounting`).
///
/// - A body refused after it arrived was received all the same: its error counts it
///   (`FetchError.receivedBytes`); bytes of failed attempts before an answer are added to the
///   image (`failedBytes`) or the error.
/// - A failed download (not a cancelled one) is logged with its URL and cause.
///
/// Thread safety: every member may be used from any thread at once.
final class Download: Sendable {
    let downloader: any ImageDownloading
    let memory: MemoryCache
    let writes: DiskWriteQueue?
    let http: HTTPOptions
    let accounting: LinkAccounting
    /// Partial bodies (nil without a disk cache).
    let partials: PartialBodies?
    private let logger: Logger
    // Guards the count of requests sent.
    private let count = Locked(0)

    init(downloader: any ImageDownloading, memory: MemoryCache, writes: DiskWriteQueue?, http: HTTPOptions,
         accounting: LinkAccounting, partials: PartialBodies?, logger: Logger) {
        self.downloader = downloader
        self.memory = memory
        self.writes = writes
        self.http = http
        self.accounting = accounting
        self.partials = partials
        self.logger = logger
    }

    /// Downloads (conditional ones included) started since the pipeline was made.
    var downloads: Int {
        count.withLock { $0 }
    }

    /// Downloads `url` without conditions and stores it with its freshness (see the type's comment).
    func download(_ url: ImageURL, priority: RequestPriority, network: NetworkState?) async throws(FetchError) -> FetchedImage {
        count.withLock { $0 += 1 }
        var request = DownloadRequest(url: url, headers: negotiationHeaders(on: network), priority: priority,
                                      retries: http.retries(on: network))
        let partial = await partials?.prepare(&request)
        let requestedAt = http.clock()
        let response: DownloadResponse
        do {
            response = try await downloader.response(to: request)
        } catch {
            if error.code != .cancelled {
                logger.warning("download failed", metadata: ["url": "\(url)", "error": "\(error)"])
            }
            throw error
        }
        accounting.measure(response, on: network)
        var image = try await adding(failedBytes: response.failedAttemptBytes) { () async throws(FetchError) in
            try await accept(response, for: url, requestedAt: requestedAt)
        }
        image.retries = max(1, response.attempts) - 1
        if response.resumedBytes > 0 { image.resumedBytes = response.resumedBytes }
        // The whole body came: no partial body is left.
        if let partials, let partial { partials.completed(partial, response: response) }
        return image
    }

    /// Asks whether the stored copy of `url` is still good with `conditions` (its validators):
    /// the answer, measured, for `Revalidation` to make sense of.
    func conditionalResponse(_ url: ImageURL, conditions: [(name: String, value: String)], priority: RequestPriority,
                             network: NetworkState?) async throws(FetchError) -> DownloadResponse {
        count.withLock { $0 += 1 }
        let response = try await downloader.response(to: DownloadRequest(url: url, headers: conditions + negotiationHeaders(on: network),
                                                                          priority: priority, retries: http.retries(on: network)))
        accounting.measure(response, on: network)
        return response
    }

    /// A whole image answered for `url`: checked against `Accept`, kept in memory, queued for the
    /// disk with its freshness (`no-store`: never written, and an older entry is removed).
    /// A body refused here was received all the same: its error counts it (`receivedBytes`).
    func accept(_ response: DownloadResponse, for url: ImageURL, requestedAt: HTTPDate) async throws(FetchError) -> FetchedImage {
        let bytes: [UInt8]
        do throws(FetchError) {
            bytes = try response.wholeImage(of: url)
            // A downloader other than `CurlTransport` may not have checked that the body is whole.
            if !response.wholeImageChecked, case .incomplete(let detail) = ImageCompleteness.check(bytes) {
                throw FetchError(url: url, code: .incompleteImage(detail))
            }
            try http.checkFormat(of: bytes, for: url)
        } catch {
            throw error.adding(receivedBytes: response.body.count)
        }
        let freshness = HTTPFreshness(status: 200, headers: response.headers, requestedAt: requestedAt, receivedAt: http.clock())
        // A complete body is kept whoever still waits: memory first, then the disk queue.
        memory.store(bytes, for: url)
        await writes?.enqueue(bytes, for: url, freshness: freshness)
        return FetchedImage(url: url, bytes: bytes, source: .network)
    }

    /// `Save-Data`, the network hints for the link measured on `network`, and `Accept`.
    private func negotiationHeaders(on network: NetworkState?) -> [(name: String, value: String)] {
        http.negotiationHeaders(on: network, estimate: network.flatMap { accounting.estimate(for: $0) })
    }
}

/// `body`'s image or error, with `bytes` more received by attempts that failed before it
/// (for the data usage: `FetchedImage.failedBytes`, `FetchError.receivedBytes`).
func adding(failedBytes bytes: Int, _ body: () async throws(FetchError) -> FetchedImage) async throws(FetchError) -> FetchedImage {
    do {
        var image = try await body()
        image.failedBytes = saturatingSum(image.failedBytes, bytes)
        return image
    } catch {
        throw error.adding(receivedBytes: bytes)
    }
}

extension FetchError {
    /// This error with `bytes` more received (a body refused after it arrived).
    func adding(receivedBytes bytes: Int) -> FetchError {
        var error = self
        error.receivedBytes = saturatingSum(receivedBytes, max(0, bytes))
        return error
    }
}
