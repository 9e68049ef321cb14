import Fetch
import Support
import Policy

/// An `ImageDownloading` that answers from a script instead of the network, for an app's own
/// tests (as swift-log's `InMemoryLogging` is for logging): bytes or a `FetchError` per URL, each
/// after a delay on an injected clock, and counts of the calls it got.
///
/// Each URL has a queue of answers: a call takes the first, and the last one stays, so
/// `script(url, .failure(.httpStatus(503)), .bytes(jpeg))` fails once, then succeeds for ever.
/// A URL with no script fails with `unscripted` (404 by default).
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
/// Delays sleep on `clock` (a `ManualClock` in tests, so that no test waits for real time); a
/// download cancelled while it waits throws `FetchError` with code `.cancelled`, as the protocol
/// requires, and so does a download started by a task already cancelled.
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
        /// The body of the image.
        case bytes([UInt8])
        /// A failure with this code (the URL is added).
        case failure(FetchError.Code)
    }

    private struct Step {
        var answer: Answer
        var delay: Duration
    }

    private struct State {
        var scripts: [ImageURL: [Step]] = [:]
        var requests: [ImageURL] = []
        var priorities: [(url: ImageURL, asked: LoadPriority, box: RequestPriority)] = []
        var networkReturns = 0
        var finished = 0
        var suspendCount = 0
        var resumeCount = 0
    }

    // Guards the scripts and the counts.
    private let state = Locked(State())
    private let clock: any Clock<Duration>

    /// What a URL with no script answers.
    public let unscripted: Answer

    /// Creates a downloader with no script.
    ///
    /// - Parameters:
    ///   - clock: what delays sleep on (default: the continuous clock; a `ManualClock` in tests).
    ///   - unscripted: the answer for a URL with no script (default: HTTP 404).
    public init(clock: any Clock<Duration> = ContinuousClock(), unscripted: Answer = .failure(.httpStatus(404))) {
        self.clock = clock
        self.unscripted = unscripted
    }

    /// Appends `answers` to `url`'s queue, each given `after` that delay on the clock.
    public func script(_ url: ImageURL, _ answers: Answer..., after delay: Duration = .zero) {
        state.withLock { state in
            state.scripts[url, default: []] += answers.map { Step(answer: $0, delay: delay) }
        }
    }

    /// Every URL asked for, in the order of the calls (repeats included).
    public var requests: [ImageURL] { state.withLock { $0.requests } }

    /// How many downloads of `url` were asked for.
    public func calls(to url: ImageURL) -> Int {
        state.withLock { state in state.requests.lazy.filter { $0 == url }.count }
    }

    /// How many downloads were asked for, of any URL.
    public var callCount: Int { state.withLock { $0.requests.count } }

    /// How many downloads have started and not yet answered (waiting out a delay).
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

    /// How many times `networkReturned()` was called.
    public var networkReturnCount: Int { state.withLock { $0.networkReturns } }

    /// Answers from `url`'s script, after its delay, at `.visible` priority.
    public func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        try await download(url, priority: RequestPriority(.visible))
    }

    /// Answers from `url`'s script, after its delay, and records `priority` (see `priority(of:)`).
    public func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8] {
        let asked = priority.value
        let step: Step = state.withLock { state in
            state.requests.append(url)
            state.priorities.append((url, asked, priority))
            guard var queue = state.scripts[url], let first = queue.first else {
                return Step(answer: unscripted, delay: .zero)
            }
            if queue.count > 1 {
                queue.removeFirst()
                state.scripts[url] = queue
            }
            return first
        }
        defer { state.withLock { $0.finished += 1 } }
        if Task.isCancelled { throw FetchError(url: url, code: .cancelled) }
        if step.delay > .zero {
            do {
                try await clock.sleep(for: step.delay)
            } catch {
                throw FetchError(url: url, code: .cancelled)
            }
        }
        switch step.answer {
        case .bytes(let bytes): return bytes
        case .failure(let code): throw FetchError(url: url, code: code)
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
