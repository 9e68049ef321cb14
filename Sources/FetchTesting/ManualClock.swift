import Support
import PolicyTesting

/// A clock whose time moves only when a test advances it: a delay scripted on a
/// `ScriptedDownloader` (or anything else that sleeps on an injected `any Clock<Duration>`)
/// ends exactly when the test says, with no real waiting.
///
/// ```swift
/// let clock = ManualClock()
/// let downloader = ScriptedDownloader(clock: clock)
/// downloader.script(url, .bytes(jpeg), after: .seconds(5))
/// let load = Task { try await downloader.download(url) }
/// await clock.waitForSleepers(1)          // the download is waiting on the clock
/// clock.advance(by: .seconds(5))          // … and now it answers
/// ```
///
/// Thread safety: every member may be used from any task or thread at once. Sleepers are resumed
/// outside the clock's lock. A cancelled sleeper throws `CancellationError` at once.
///
/// ## See Also
///
/// - <doc:TestingAnApp>
public final class ManualClock: Clock {
    /// A point in this clock's time: the duration since the clock was made.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// How long after the clock's start this instant is.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        /// The offset, for messages.
        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
        var waiters = CountWaiters()
    }

    // Guards the time, the sleeping tasks and the tasks waiting for sleepers.
    private let state = Locked(State())

    /// Creates a clock at its start (`Instant(offset: .zero)`).
    public init() {}

    /// The instant now: moves only by `advance(by:)` and `advance(to:)`.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: any duration can be slept exactly.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the clock reaches `deadline` (at once if it has); throws
    /// `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (due, ready): (Bool, [CheckedContinuation<Void, Never>]) = state.withLock { state in
                    if deadline <= state.now { return (true, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (false, state.waiters.released(at: state.sleepers.count))
                }
                for waiter in ready { waiter.resume() }
                if due { continuation.resume() }
                if Task.isCancelled { cancel(id) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    /// Moves the clock `duration` forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let target = now.advanced(by: duration)
        advance(to: target)
    }

    /// Moves the clock to `instant` (never backwards) and wakes every sleeper whose deadline has come.
    public func advance(to instant: Instant) {
        let woken: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            if state.now < instant { state.now = instant }
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.sorted { $0.value.deadline < $1.value.deadline }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on the clock, so that a test advances the clock
    /// only after the code under test started waiting on it.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let kept = state.withLock { state in
                state.waiters.wait(for: count, current: state.sleepers.count, continuation)
            }
            if !kept { continuation.resume() }
        }
    }

    private func cancel(_ id: Int) {
        let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
        sleeper?.continuation.resume(throwing: CancellationError())
    }
}
