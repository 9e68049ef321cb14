import CCurl
import Policy
import Support
import Synchronization
import HTTPSemantics

/// One attempt at a download: its request and priority, the bytes received so far, and the
/// continuation of the task that waits for it.
///
/// `body`, `receivedBytes`, `tooLarge`, `answer`, the redirect and header-field state and `easy`
/// are touched only on the transport thread (its curl callbacks included); `retryAfter` and
/// `afterFailure` are written by the thread and read by the waiter, under locks of their own;
/// `isCancelled` is atomic; the continuation is resumed exactly once, under `resumed`'s lock.
final class Transfer: @unchecked Sendable {
    /// The URL asked for.
    let url: ImageURL
    /// The URL requested now: `url`, or the target of the redirects followed so far.
    var currentURL: ImageURL
    /// Redirects followed so far.
    var redirects = 0
    let hostKey: String
    let maximumBodySize: Int
    /// Read by the queue each time it chooses what to start.
    let priority: RequestPriority
    /// Whether the response carries its header fields: not for `download`, which returns the body
    /// only (no strings made per field for nothing).
    let returnsHeaders: Bool
    /// Extra request header fields (`Name: value` lines), owned by the transfer until it ends.
    let requestHeaders: UnsafeMutablePointer<curl_slist>?
    /// The bytes held before this attempt, asked to be completed with `Range` and `If-Range`.
    let resumption: RangeResumption?
    /// When the request was sent: set on the transport thread when the transfer starts.
    var requestedAt = HTTPDate.now()
    /// The body so far: the held bytes and the rest while the answer is being combined with them
    /// (`answer == .combined`), else the answer's own body.
    var body: [UInt8] = []
    /// What the body of the response being received is (judged at its first body bytes).
    var answer = Answer.awaiting
    /// Body bytes curl handed over, a chunk refused as too large included: what a failed attempt
    /// received (`FetchError.receivedBytes`).
    var receivedBytes = 0
    /// The `Content-Length` values of the response being received (its header lines, as they come).
    var contentLengths: [String] = []
    /// Body bytes of the response being received (its own, not the held ones): when they reach its
    /// `Content-Length` and the image is not whole, the connection is not reused (the rest of the
    /// image may still be on its way in it).
    var responseBodyBytes = 0
    /// The attempts before this one failed: it opens a connection of its own (a failed attempt's
    /// connection may hold the excess bytes of a short `Content-Length`).
    var freshConnection = false
    /// The completeness of `body` judged when it reached its `Content-Length` (and at which body
    /// length): the verdict reuses it rather than scan the body a second time.
    var judgedCompleteness: (length: Int, completeness: ImageCompleteness)?

    /// Whether `body` holds a whole image, scanned once per body length.
    func completeness() -> ImageCompleteness {
        if let judged = judgedCompleteness, judged.length == body.count { return judged.completeness }
        let completeness = ImageCompleteness.check(body)
        judgedCompleteness = (body.count, completeness)
        return completeness
    }
    /// Who hears of the body while it arrives, at which length next, and how much of `body` it
    /// heard of already (the held bytes of a combined answer count as heard of).
    var checkpoints: BodyCheckpoints?
    var reportedLength = 0
    var nextCheckpoint = Int.max
    /// The wait a failed response asked for with `Retry-After`, if it did. Locked: a transfer
    /// cancelled as its response arrived is finished (and its waiter reads this) while the
    /// transport thread may still be judging that response.
    var retryAfter: RetryAfter? {
        get { retryAfterState.withLock { $0 } }
        set { retryAfterState.withLock { $0 = newValue } }
    }
    private let retryAfterState = Locked<RetryAfter?>(nil)
    /// What a failed attempt leaves for the next one (set before its waiter is resumed).
    var afterFailure: AfterFailure {
        get { afterFailureState.withLock { $0 } }
        set { afterFailureState.withLock { $0 = newValue } }
    }
    private let afterFailureState = Locked(AfterFailure())
    var tooLarge = false
    /// Why the last socket this transfer asked for could not be made (an errno), 0 if it was.
    var socketErrno: Int32 = 0
    var easy: UnsafeMutableRawPointer?
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// What the body being received is.
    enum Answer: Equatable {
        /// No body byte judged yet.
        case awaiting
        /// A 2xx's own body from its first byte (the held bytes, if any, were dropped).
        case whole
        /// The held bytes, then the rest a 206 brings (`RangeResumption.Verdict.combine`).
        case combined
        /// Not a 2xx: an error page, a redirect's body.
        case error
        /// A 206 that cannot be combined with the held bytes: why. The transfer was stopped.
        case refused(String)
    }

    /// What a failed attempt leaves for the next: the bytes it makes resumable, and how many of
    /// the image bytes it (and the held bytes before it) received would be lost by asking again
    /// from the start.
    struct AfterFailure: Sendable {
        /// The resumption the next attempt can make; nil: none, ask for the whole image.
        var resumption: RangeResumption?
        /// Whether the held bytes of this attempt's resumption were dropped (a 200 instead, a
        /// refused 206): they cannot be resumed from again.
        var heldBytesDropped = false
        /// Why the answer could not complete the held bytes (a 206 for another version or range,
        /// a 416): the whole image is asked for next, at once.
        var refusal: String?
        /// Whether this attempt received body bytes of a 2xx answer (image bytes).
        var receivedImageBytes = false
    }

    private let cancelled = Atomic<Bool>(false)
    // Guards the continuation, so that it is resumed once whoever finishes first.
    private let resumed = Locked<CheckedContinuation<DownloadResponse, any Error>?>(nil)

    init(url: ImageURL, maximumBodySize: Int, priority: RequestPriority = RequestPriority(),
         headers: [(name: String, value: String)] = [], returnsHeaders: Bool = true, resumption: RangeResumption? = nil) {
        self.url = url
        self.currentURL = url
        self.returnsHeaders = returnsHeaders
        self.resumption = resumption
        body = resumption?.held.bytes ?? []
        var list: UnsafeMutablePointer<curl_slist>?
        // With a resumption, its Range and If-Range replace any the caller gave.
        let fields = resumption.map { held in
            headers.filter { !["range", "if-range"].contains($0.name.lowercased()) } + held.requestHeaders
        } ?? headers
        for (name, value) in fields {
            // A line break in a field would split the request: such a field is not sent.
            let line = "\(name): \(value)"
            guard !line.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else { continue }
            list = curl_slist_append(list, line)
        }
        requestHeaders = list
        self.priority = priority
        self.hostKey = Transfer.hostKey(of: url.absoluteString)
        self.maximumBodySize = maximumBodySize
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        errorBuffer.deallocate()
        curl_slist_free_all(requestHeaders)
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func markCancelled() { cancelled.store(true, ordering: .releasing) }

    /// Whether the waiting task has not been resumed yet (false also before `setContinuation`).
    var isUnfinished: Bool { resumed.withLock { $0 != nil } }

    func setContinuation(_ continuation: CheckedContinuation<DownloadResponse, any Error>) {
        resumed.withLock { $0 = continuation }
    }

    /// Resumes the waiting task with `result`; later calls do nothing.
    func finish(_ result: Result<DownloadResponse, FetchError>) {
        let continuation = resumed.withLock { stored -> CheckedContinuation<DownloadResponse, any Error>? in
            defer { stored = nil }
            return stored
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    /// `scheme://host:port`, lowercased: what the per-host connection limit counts.
    static func hostKey(of url: String) -> String {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return url.lowercased() }
        var start = colon + 1
        while start < bytes.count, bytes[start] == UInt8(ascii: "/") { start += 1 }
        var end = start
        var userEnd: Int?
        while end < bytes.count, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[end]) {
            if bytes[end] == UInt8(ascii: "@") { userEnd = end + 1 }
            end += 1
        }
        let host = bytes[(userEnd ?? start)..<end]
        return (String(decoding: bytes[..<colon], as: UTF8.self) + "://" + String(decoding: host, as: UTF8.self)).lowercased()
    }
}
