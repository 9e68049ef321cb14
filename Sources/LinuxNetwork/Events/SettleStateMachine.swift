/// When to look at the network again after netlink said something changed: the debounce, as a
/// state machine that returns actions and does no I/O (tested with plain instants).
///
/// A burst (a flapping link gives dozens of messages within milliseconds) gives one detection,
/// `quietPeriod` after its last message. A link that never stops flapping is still looked at
/// every `maximumDelay`, so that the state cannot freeze.
struct SettleStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    enum State: Sendable, Equatable {
        /// Nothing pending.
        case idle
        /// Messages arrived: a timer runs; `first` and `last` are the first and latest message.
        case waiting(first: Instant, last: Instant)
    }

    enum Action: Sendable, Equatable {
        /// Nothing to do.
        case none
        /// Start (or keep) a timer that calls `timerFired` at this instant.
        case sleep(until: Instant)
        /// Detect now: the burst is over.
        case detect
    }

    /// How long without a message before the burst counts as over.
    let quietPeriod: Duration
    /// The longest a burst can delay a detection.
    let maximumDelay: Duration
    private(set) var state: State = .idle

    init(quietPeriod: Duration, maximumDelay: Duration) {
        self.quietPeriod = quietPeriod
        self.maximumDelay = max(maximumDelay, quietPeriod)
    }

    /// A change message arrived at `now`. `.sleep` means: start a timer (none runs).
    mutating func messageArrived(at now: Instant) -> Action {
        switch state {
        case .idle:
            state = .waiting(first: now, last: now)
            return .sleep(until: now.advanced(by: quietPeriod))
        case .waiting(let first, let last):
            state = .waiting(first: first, last: max(last, now))
            return .none  // the running timer looks again when it fires
        }
    }

    /// The timer fired at `now`: detect, or sleep on until the burst has been quiet long enough.
    mutating func timerFired(at now: Instant) -> Action {
        guard case .waiting(let first, let last) = state else { return .none }
        let deadline = min(last.advanced(by: quietPeriod), first.advanced(by: maximumDelay))
        guard now >= deadline else { return .sleep(until: deadline) }
        state = .idle
        return .detect
    }
}
