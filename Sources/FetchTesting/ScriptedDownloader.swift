import Fetch
import Support
import Policy

/// An `ImageDownloading` that answers from a script instead of the network, for an app's own
/// tests (as swift-log's `InMemoryLogging` is for logging): bytes or a `FetchError` per URL, each
/// after a delay on an injected clock, and counts of the calls it got.
///
/// Each URL has a queue of answers: a call takes the first, and the last one stays, so
/// `script(url, .failure(.httpStatus(503)), .bytes(jpeg))` fails once, then succeeds for ever.
/// A URL with no script fails with `unscripted` (404 by default), or gets what `answering`
/// computes from its request, when the downloader was made with it:
///
/// ```swift
/// let downloader = ScriptedDownloader { request in
///     request.headers.contains { $0.name == "If-None-Match" }
///         ? .response(DownloadResponse(status: 304, body: [], requestedAt: .now(), receivedAt: .now()))
///         : .bytes(jpeg)
/// }
/// ```
///
/// A `.response` answer is the server's whole answer (status, header fields, body), for tests
/// of revalidation and caching; `receivedRequests` keeps each request with the header fields it
/// carried (a conditional request's `If-None-Match`, say).
///
/// ```swift
/// import FetchTesting
///
/// @Test func aFailedLoadIsRetriedOnce() async throws {
///     let downloader = ScriptedDownloader()
///     downloader.script(url, .failure(.httpStatus(503)), .bytes(jpeg))
///     let pipeline = ImagePipeline(downloader: downloader, disk: nil)
///     await #expect(throws: FetchError.self) { try await pipeline.image(for: url) }
///     #expect(try await pipeline.image(for: url).bytes == jpeg)
///     #expect(downloader.calls(to: url) == 2)
/// }
/// ```
///
/// With `concurrentDownloads`, only so many downloads run at once (a running one holds its place
/// until it answers) and the others wait in a queue, started in priority order as the transport
/// starts them: a list's tests can check that a row scrolled onto the screen overtakes a prefetch.
///
/// An answer can also wait for a `Gate` the test opens (`script(_:_:after:heldBy:)`), to hold a
/// load in flight for as long as the test needs.
///
/// Delays sleep on `clock` (a `ManualClock` in tests, so that no test waits for real time); a
/// download cancelled while it waits throws `FetchError` with code `.cancelled`, as the protocol
/// requires, and so does a download started by a task already cancelled, or cancelled while it
/// waits in the queue; one cancelled at a gate does what the `Gate` says.
///
/// Priorities: each download keeps the `RequestPriority` it was asked with (`download(_:)` counts
/// as `.visible`), so that a list's tests can check what was asked first and what a scroll changed:
/// `requestedPriorities` has the value each call had when it was made, and `priority(of:)` the
/// value now of the latest call for a URL (a priority raised while the download waits shows).
///
/// ```swift
/// list.setVisibleRows(0..<2)
/// #expect(downloader.priority(of: firstRowURL) == LoadPriority(.visible, order: 0))
/// ```
///
/// Thread safety: every member may be used from any task or thread at once.
///
/// ## See Also
///
/// - <doc:TestingAnApp>
public final class ScriptedDownloader: ImageDownloading {
    /// What a download answers.
    public enum Answer: Sendable, Equatable {
        /// The body of the image (a 200 without header fields).
        case bytes([UInt8])
        /// A failure with this code (the URL is added).
        case failure(FetchError.Code)
        /// The server's whole answer: status, header fields and body (a 304 or a 200 with an
        /// `ETag`, say). `download(_:)` returns its body when the status is 2xx and fails with
        /// `.httpStatus` otherwise; `response(to:)` returns it as it is.
        case response(DownloadResponse)

        /// Whether both are the same case with the same bytes, code, or status, header fields
        /// and body.
        public static func == (lhs: Answer, rhs: Answer) -> Bool {
            switch (lhs, rhs) {
            case (.bytes(let left), .bytes(let right)): return left == right
            case (.failure(let left), .failure(let right)): return left == right
            case (.response(let left), .response(let right)):
                return left.status == right.status && left.body == right.body
                    && left.headers.map(\.name) == right.headers.map(\.name)
                    && left.headers.map(\.value) == right.headers.map(\.value)
            default: return false
            }
        }
    }

    private struct Step {
        var answer: Answer
        var delay: Duration
        var gate: Gate?
    }

    private struct State {
        var scripts: [ImageURL: [Step]] = [:]
        var requests: [ImageURL] = []
        var received: [DownloadRequest] = []
        var priorities: [(url: ImageURL, asked: LoadPriority, box: RequestPriority)] = []
        var networkReturns = 0
        var finished = 0
        var suspendCount = 0
        var resumeCount = 0
        var running = 0
        var queued: [Int: Queued] = [:]
        var nextQueuedID = 0
        var started: [ImageURL] = []
    }

    private struct Queued {
        var url: ImageURL
        var priority: RequestPriority
        var continuation: CheckedContinuation<Bool, Never>
    }

    // Guards the scripts and the counts.
    private let state = Locked(State())
    private let clock: any Clock<Duration>
    private let answering: (@Sendable (DownloadRequest) -> Answer)?
    private let answeringGate: Gate?
    private let latency: Latency

    /// How many downloads may run at once (nil: any number); the others wait in a queue and
    /// start in priority order (see `queuedURLs`).
    public let concurrentDownloads: Int?

    /// What a URL with no script answers (when the downloader was not made with `answering`).
    public let unscripted: Answer

    /// Creates a downloader with no script.
    ///
    /// - Parameters:
    ///   - clock: what delays sleep on (default: the continuous clock; a `ManualClock` in tests).
    ///   - unscripted: the answer for a URL with no script (default: HTTP 404).
    ///   - concurrentDownloads: how many downloads may run at once (default: any number).
    public init(clock: any Clock<Duration> = ContinuousClock(), unscripted: Answer = .failure(.httpStatus(404)),
                concurrentDownloads: Int? = nil) {
        self.clock = clock
        self.concurrentDownloads = concurrentDownloads.map { max(1, $0) }
        self.unscripted = unscripted
        self.answering = nil
        self.answeringGate = nil
        self.latency = .none
    }

    /// Creates a downloader that answers every URL with no script with what `answering` makes
    /// of its request: `ScriptedDownloader { .bytes(body(of: $0.url)) }`; after `latency` on
    /// the clock (at once by default), and then only when `gate` opens, if there is one.
    ///
    /// `answering` is called once per download, outside the downloader's lock, from the task
    /// that asked; it may be called from many tasks at once.
    ///
    /// - Parameters:
    ///   - clock: what delays sleep on (default: the continuous clock).
    ///   - latency: how long each answer of `answering` takes (default: none; see `Latency`).
    ///   - concurrentDownloads: how many downloads may run at once (default: any number).
    ///   - gate: a gate every answer of `answering` waits for (default: none; see `Gate`).
    ///   - answering: the answer to a request for a URL with no script.
    public init(clock: any Clock<Duration> = ContinuousClock(), latency: Latency = .none, concurrentDownloads: Int? = nil,
                heldBy gate: Gate? = nil, answering: @escaping @Sendable (DownloadRequest) -> Answer) {
        self.concurrentDownloads = concurrentDownloads.map { max(1, $0) }
        self.latency = latency
        self.clock = clock
        self.unscripted = .failure(.httpStatus(404))
        self.answering = answering
        self.answeringGate = gate
    }

    /// Appends `answers` to `url`'s queue, each given `after` that delay on the clock, and then
    /// only once `gate` is open, if there is one (see `Gate`).
    public func script(_ url: ImageURL, _ answers: Answer..., after delay: Duration = .zero, heldBy gate: Gate? = nil) {
        state.withLock { state in
            state.scripts[url, default: []] += answers.map { Step(answer: $0, delay: delay, gate: gate) }
        }
    }

    /// Every URL asked for, in the order of the calls (repeats included).
    public var requests: [ImageURL] { state.withLock { $0.requests } }

    /// Every request, in the order of the calls, with the header fields and priority it was
    /// asked with (`download(_:)` is a request without header fields).
    public var receivedRequests: [DownloadRequest] { state.withLock { $0.received } }

    /// How many downloads of `url` were asked for.
    public func calls(to url: ImageURL) -> Int {
        state.withLock { state in state.requests.lazy.filter { $0 == url }.count }
    }

    /// How many downloads were asked for, of any URL.
    public var callCount: Int { state.withLock { $0.requests.count } }

    /// How many downloads were asked for and have not yet answered (queued, waiting out a
    /// delay, or held at a gate).
    public var inFlightCount: Int { state.withLock { $0.requests.count - $0.finished } }

    /// How many times `suspend()` and `resume()` were called.
    public struct Suspensions: Sendable, Equatable {
        /// Calls of `suspend()`.
        public var suspend: Int
        /// Calls of `resume()`.
        public var resume: Int
    }

    /// How many times `suspend()` and `resume()` were called.
    public var suspensions: Suspensions {
        state.withLock { Suspensions(suspend: $0.suspendCount, resume: $0.resumeCount) }
    }

    /// The priority each download was asked with, when it was asked, in the order of the calls.
    public var requestedPriorities: [(url: ImageURL, priority: LoadPriority)] {
        state.withLock { $0.priorities.map { ($0.url, $0.asked) } }
    }

    /// The priority of the latest download of `url` as it is now (read from the `RequestPriority`
    /// the download was asked with, so the last value its caller set); nil if `url` was never asked for.
    public func priority(of url: ImageURL) -> LoadPriority? {
        let box = state.withLock { state in state.priorities.last { $0.url == url }?.box }
        return box?.value
    }

    /// The URLs of the downloads that started (got a place to run), in the order they started;
    /// without `concurrentDownloads`, every call starts at once.
    public var startedURLs: [ImageURL] { state.withLock { $0.started } }

    /// The URLs of the downloads waiting in the queue for a place to run (with
    /// `concurrentDownloads`), in the order they were asked for. A download cancelled while it
    /// waits leaves the queue without starting.
    public var queuedURLs: [ImageURL] {
        state.withLock { $0.queued.sorted { $0.key < $1.key }.map(\.value.url) }
    }

    /// How many downloads wait in the queue (see `queuedURLs`).
    public var queuedCount: Int { state.withLock { $0.queued.count } }

    /// How many times `networkReturned()` was called.
    public var networkReturnCount: Int { state.withLock { $0.networkReturns } }

    /// Answers from `url`'s script, after its delay, at `.visible` priority.
    public func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        try await download(url, priority: RequestPriority(.visible))
    }

    /// Answers from `url`'s script, after its delay, and records `priority` (see `priority(of:)`).
    public func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8] {
        let response = try await answer(DownloadRequest(url: url, priority: priority))
        guard (200..<300).contains(response.status) else { throw FetchError(url: url, code: .httpStatus(response.status)) }
        return response.body
    }

    /// Answers from the script of `request.url`, after its delay: `.bytes` as a 200 without
    /// header fields, `.response` as it is; records the request (see `receivedRequests`).
    public func response(to request: DownloadRequest) async throws(FetchError) -> DownloadResponse {
        try await answer(request)
    }

    /// `response(to:)` for a request with these fields.
    public func response(for url: ImageURL, headers: [(name: String, value: String)],
                         priority: RequestPriority, checkpoints: BodyCheckpoints?) async throws(FetchError) -> DownloadResponse {
        try await answer(DownloadRequest(url: url, headers: headers, priority: priority, checkpoints: checkpoints))
    }

    private func answer(_ request: DownloadRequest) async throws(FetchError) -> DownloadResponse {
        let url = request.url
        let requestedAt = HTTPDate.now()
        let asked = request.priority.value
        let scripted: Step? = state.withLock { state in
            state.requests.append(url)
            state.received.append(request)
            state.priorities.append((url, asked, request.priority))
            guard var queue = state.scripts[url], let first = queue.first else { return nil }
            if queue.count > 1 {
                queue.removeFirst()
                state.scripts[url] = queue
            }
            return first
        }
        defer { state.withLock { $0.finished += 1 } }
        let step = scripted ?? Step(answer: answering?(request) ?? unscripted, delay: answering == nil ? .zero : latency.next(), gate: answeringGate)
        guard await start(url, request.priority) else { throw FetchError(url: url, code: .cancelled) }
        defer { end() }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        if step.delay > .zero {
            do {
                try await clock.sleep(for: step.delay)
            } catch {
                throw FetchError(url: url, code: .cancelled)
            }
        }
        if let gate = step.gate {
            await gate.pass(url)
            if Task.isCancelled && gate.whenCancelled != .completes { throw FetchError(url: url, code: .cancelled) }
        }
        switch step.answer {
        case .bytes(let bytes): return DownloadResponse(status: 200, body: bytes, requestedAt: requestedAt, receivedAt: HTTPDate.now())
        case .failure(let code): throw FetchError(url: url, code: code)
        case .response(let response): return response
        }
    }

    /// Starts a download: at once without `concurrentDownloads`; otherwise when it is the most
    /// urgent in the queue (its priority read when a place frees, the earliest first among
    /// equals) and a place is free. False if the task was cancelled while it waited.
    private func start(_ url: ImageURL, _ priority: RequestPriority) async -> Bool {
        guard concurrentDownloads != nil else {
            state.withLock { $0.started.append(url) }
            return true
        }
        let id = state.withLock { state in
            state.nextQueuedID += 1
            return state.nextQueuedID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                state.withLock { $0.queued[id] = Queued(url: url, priority: priority, continuation: continuation) }
                if Task.isCancelled { leaveQueue(id) }
                startQueued()
            }
        } onCancel: {
            leaveQueue(id)
        }
    }

    /// A download that started has answered: its place goes to the next in the queue.
    private func end() {
        guard concurrentDownloads != nil else { return }
        state.withLock { $0.running -= 1 }
        startQueued()
    }

    private func leaveQueue(_ id: Int) {
        let continuation = state.withLock { $0.queued.removeValue(forKey: id)?.continuation }
        continuation?.resume(returning: false)
    }

    /// Starts the most urgent queued downloads while places are free. Priorities are read
    /// outside the lock (each `RequestPriority` has its own), then the choice is checked again.
    private func startQueued() {
        guard let limit = concurrentDownloads else { return }
        while true {
            let candidates = state.withLock { state -> [(id: Int, priority: RequestPriority)] in
                state.running < limit ? state.queued.map { ($0.key, $0.value.priority) } : []
            }
            guard !candidates.isEmpty else { return }
            let read = candidates.map { (id: $0.id, value: $0.priority.value) }
            guard let chosen = read.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.id > $1.id }) else { return }
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard state.running < limit, let queued = state.queued.removeValue(forKey: chosen.id) else { return nil }
                state.running += 1
                state.started.append(queued.url)
                return queued.continuation
            }
            continuation?.resume(returning: true)
        }
    }

    /// Counts the call (see `suspensions`); downloads are not held.
    public func suspend() {
        state.withLock { $0.suspendCount += 1 }
    }

    /// Counts the call (see `suspensions`).
    public func resume() {
        state.withLock { $0.resumeCount += 1 }
    }

    /// Counts the call (see `networkReturnCount`); scripted answers have no backoff to cut short.
    public func networkReturned() {
        state.withLock { $0.networkReturns += 1 }
    }
}
