import CCurl
import Policy
import Locking
import Synchronization

/// One attempt at a download: its request and priority, the bytes received so far, and the
/// continuation of the task that waits for it.
///
/// `body`, `receivedBytes`, `tooLarge` and `easy` are touched only on the transport thread; `retryAfter` is written
/// by the thread and read by the waiter, under a lock of its own; `isCancelled` is
/// atomic; the continuation is resumed exactly once, under `resumed`'s lock.
final class Transfer: @unchecked Sendable {
    let url: ImageURL
    let hostKey: String
    let maximumBodySize: Int
    /// Read by the queue each time it chooses what to start.
    let priority: RequestPriority
    /// Whether the response carries its header fields: not for `download`, which returns the body
    /// only (no strings made per field for nothing).
    let returnsHeaders: Bool
    /// Extra request header fields (`Name: value` lines), owned by the transfer until it ends.
    let requestHeaders: UnsafeMutablePointer<curl_slist>?
    /// When the request was sent: set on the transport thread when the transfer starts.
    var requestedAt = HTTPDate.now()
    var body: [UInt8] = []
    /// Body bytes curl handed over, a chunk refused as too large included: what a failed attempt
    /// received (`FetchError.receivedBytes`).
    var receivedBytes = 0
    /// Who hears of the body while it arrives, and at which length next.
    var checkpoints: BodyCheckpoints?
    var nextCheckpoint = Int.max
    /// The wait a failed response asked for with `Retry-After`, if it did. Locked: a transfer
    /// cancelled as its response arrived is finished (and its waiter reads this) while the
    /// transport thread may still be judging that response.
    var retryAfter: RetryAfter? {
        get { retryAfterState.withLock { $0 } }
        set { retryAfterState.withLock { $0 = newValue } }
    }
    private let retryAfterState = Locked<RetryAfter?>(nil)
    var tooLarge = false
    var easy: UnsafeMutableRawPointer?
    let errorBuffer: UnsafeMutablePointer<CChar>

    private let cancelled = Atomic<Bool>(false)
    // Guards the continuation, so that it is resumed once whoever finishes first.
    private let resumed = Locked<CheckedContinuation<DownloadResponse, any Error>?>(nil)

    init(url: ImageURL, maximumBodySize: Int, priority: RequestPriority = RequestPriority(),
         headers: [(name: String, value: String)] = [], returnsHeaders: Bool = true) {
        self.url = url
        self.returnsHeaders = returnsHeaders
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers {
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
