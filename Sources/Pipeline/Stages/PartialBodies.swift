import Logging
import Support
import Policy
import Transport
import Caching
import HTTPSemantics

/// The pipeline's stage of resumable downloads: a body is kept in the disk cache as a partial
/// body while it arrives, and a partial body kept earlier is handed to the downloader to resume
/// (`DownloadRequest.resuming`): `CurlTransport` asks for the rest only and combines it with the
/// kept bytes only when the server's `206` is the rest of the same version.
///
/// - Only a 200 with a strong validator, a `Content-Length` and no `Content-Encoding` is kept (a
///   body the downloader combined with kept bytes comes as the 200 it completes).
/// - The first checkpoint is saved, each later one appended (`appendPartial`, which does nothing
///   unless the partial body on disk ends exactly where the report starts), on the disk writer's
///   one thread, in order: a body of n bytes is written once, not once per report.
/// - Once the whole body came (`completed(_:)`), saves still queued are skipped and the partial
///   body is discarded: a body that arrives whole costs no disk writes.
/// - The disk is asked for a partial body only when the cache counts some (in memory).
///
/// Thread safety: every member may be used from any thread at once.
final class PartialBodies: Sendable {
    /// One download's partial body: whether the whole body came.
    final class Body: Sendable {
        let url: ImageURL
        /// Whether the request resumes a kept partial body.
        let resumes: Bool
        // Guards whether the whole body came (checkpoint saves queued before then are skipped).
        fileprivate let completed = Locked(false)

        fileprivate init(url: ImageURL, resumes: Bool) {
            self.url = url
            self.resumes = resumes
        }
    }

    let disk: DiskCache
    /// The disk writer's one thread: saves run there in order.
    let thread: BlockingWorkPool
    private let clock: @Sendable () -> HTTPDate
    private let logger: Logger
    // Guards the downloads completed by resuming.
    private let resumes = Locked(ResumeStatistics())

    /// A stage keeping partial bodies in `disk`, written on `thread`.
    init(disk: DiskCache, thread: BlockingWorkPool, clock: @escaping @Sendable () -> HTTPDate, logger: Logger) {
        self.disk = disk
        self.thread = thread
        self.clock = clock
        self.logger = logger
    }

    /// Downloads completed by resuming a partial body, and the bytes not downloaded again.
    var statistics: ResumeStatistics {
        resumes.withLock { $0 }
    }

    /// Makes `request` resumable: the partial body kept for its URL, if any, to resume; bodies
    /// asked for as they are (a range counts encoded bytes); checkpoints that keep the body
    /// while it arrives. Call `completed(_:response:)` with what it returns once the body came whole.
    func prepare(_ request: inout DownloadRequest) async -> Body {
        let url = request.url
        let disk = self.disk
        // Only when partial bodies exist (counted in memory: no disk call for the common case).
        if disk.partialStatistics.count > 0, let kept = await thread.run({ disk.partial(for: url) }) {
            request.resuming = kept
        }
        request.headers.append(("Accept-Encoding", "identity"))
        let transfer = Body(url: url, resumes: request.resuming != nil)
        request.checkpoints = checkpoints(for: transfer)
        return transfer
    }

    /// The whole body of `transfer` came as `response` (and was accepted): counts a resumption,
    /// skips the saves still queued, and discards the partial body.
    func completed(_ transfer: Body, response: DownloadResponse) {
        if response.resumedBytes > 0 { resumes.withLock { $0.add(savedBytes: response.resumedBytes) } }
        transfer.completed.withLock { $0 = true }
        let (disk, url) = (self.disk, transfer.url)
        if transfer.resumes || response.body.count >= disk.partialLimits.minimumBytes {
            thread.submit { disk.discardPartial(for: url) }
        }
    }

    /// Keeps the body of `transfer` as a partial body while it arrives (see the type's comment).
    private func checkpoints(for transfer: Body) -> BodyCheckpoints {
        let (clock, logger, disk, thread, url) = (self.clock, self.logger, self.disk, self.thread, transfer.url)
        return BodyCheckpoints(every: max(1, disk.partialLimits.minimumBytes)) { received in
            guard received.status == 200 else { return }
            let fields = ResponseFields(received.headers)
            if let encoding = fields.contentEncoding, encoding.lowercased() != "identity" { return }
            guard let total = fields.singleContentLength, total > received.length,
                  let validator = HTTPFreshness(status: 200, headers: received.headers, receivedAt: clock()).rangeValidator else { return }
            let (bytes, offset) = (received.bytes, received.offset)
            thread.submit {
                guard !transfer.completed.withLock({ $0 }) else { return }
                do throws(DiskCacheError) {
                    if offset == 0 {
                        _ = try disk.savePartial(bytes, for: url, validator: validator, totalLength: total)
                    } else {
                        _ = try disk.appendPartial(bytes, for: url, at: offset)
                    }
                } catch {
                    logger.info("cannot keep a partial body", metadata: ["url": "\(url)", "error": "\(error.message)"])
                }
            }
        }
    }
}
