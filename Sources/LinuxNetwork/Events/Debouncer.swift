import Support

/// What the event loop needs of the debounce: a message arrived; stop for good.
protocol MessageDebouncing: Sendable {
    /// A change message arrived now.
    func messageArrived()
    /// Cancels the pending timer; later messages are ignored.
    func stop()
}

/// Runs `SettleStateMachine` on a clock: the timer is a task sleeping on the injected clock, and
/// `settled` is called (outside any lock) when a burst is over.
///
/// Thread safety: every method may be called from any thread at once.
final class Debouncer<C: Clock>: MessageDebouncing where C.Duration == Duration {
    private struct Inner: Sendable {
        var machine: SettleStateMachine<C.Instant>
        var timer: Task<Void, Never>?
        var stopped = false
    }

    // Guards the machine, the running timer and whether the debouncer was stopped.
    private let inner: Locked<Inner>
    private let clock: C
    private let settled: @Sendable () -> Void

    /// A debouncer on `clock` calling `settled` when a burst is over.
    init(clock: C, quietPeriod: Duration, maximumDelay: Duration, settled: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.settled = settled
        inner = Locked(Inner(machine: SettleStateMachine(quietPeriod: quietPeriod, maximumDelay: maximumDelay)))
    }

    func messageArrived() {
        let now = clock.now
        let action = inner.withLock { inner in
            inner.stopped ? .none : inner.machine.messageArrived(at: now)
        }
        guard case .sleep(let deadline) = action else { return }
        let task = Task { [clock, inner, settled] in
            var deadline = deadline
            while true {
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                let now = clock.now
                let next = inner.withLock { $0.stopped ? .none : $0.machine.timerFired(at: now) }
                switch next {
                case .sleep(let later): deadline = later
                case .detect: settled(); return
                case .none: return
                }
            }
        }
        let cancelAtOnce = inner.withLock { inner in
            guard !inner.stopped else { return true }
            inner.timer = task
            return false
        }
        if cancelAtOnce { task.cancel() }
    }

    func stop() {
        let timer = inner.withLock { inner in
            inner.stopped = true
            defer { inner.timer = nil }
            return inner.timer
        }
        timer?.cancel()
    }
}

/// A debouncer on whatever clock `clock` is (opens the existential).
func makeDebouncer(clock: any Clock<Duration>, quietPeriod: Duration, maximumDelay: Duration,
                   settled: @escaping @Sendable () -> Void) -> any MessageDebouncing {
    func open<Opened: Clock<Duration>>(_ clock: Opened) -> any MessageDebouncing {
        Debouncer<Opened>(clock: clock, quietPeriod: quietPeriod, maximumDelay: maximumDelay, settled: settled)
    }
    return open(clock)
}
