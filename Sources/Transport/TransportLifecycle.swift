import HTTPSemantics
/// The life of a `CurlTransport` as a state machine that returns what to do, tested without I/O:
/// running until the first shutdown request, then stopping until its thread has cancelled every
/// transfer and freed every curl handle, then stopped.
///
/// `Waiter` is whoever waits for the end of a shutdown (a task's continuation, a blocked thread).
/// The transport keeps this value under its lock and carries out the actions outside it.
struct TransportLifecycle<Waiter> {
    enum State {
        /// Accepts downloads.
        case running
        /// A shutdown was asked for; the thread is winding down. The waiters are resumed when it
        /// has finished.
        case stopping(waiters: [Waiter])
        /// The thread has freed the multi handle and exited.
        case stopped
    }

    /// What the caller of `requestShutdown` does next, outside the lock.
    enum ShutdownAction: Equatable {
        /// The first request: wake the thread so that it stops; the waiter (if any) is kept.
        case wakeThread
        /// A shutdown is already under way: the waiter (if any) is kept and resumed with the others.
        case wait
        /// The transport has stopped already: resume the waiter now.
        case resumeNow
    }

    private(set) var state: State = .running

    /// Whether new downloads are accepted.
    var isRunning: Bool {
        if case .running = state { return true }
        return false
    }

    /// Whether the thread still owns the multi handle, so that it may be woken.
    var threadIsAlive: Bool {
        if case .stopped = state { return false }
        return true
    }

    /// Whether the thread must stop.
    var isStopping: Bool {
        if case .stopping = state { return true }
        return false
    }

    /// Asks for a shutdown; `waiter` (nil: nobody waits, as in `deinit`) is resumed once the thread
    /// has stopped. Every request after the first is harmless.
    mutating func requestShutdown(_ waiter: Waiter?) -> ShutdownAction {
        switch state {
        case .running:
            state = .stopping(waiters: waiter.map { [$0] } ?? [])
            return .wakeThread
        case .stopping(var waiters):
            if let waiter { waiters.append(waiter) }
            state = .stopping(waiters: waiters)
            return .wait
        case .stopped:
            return .resumeNow
        }
    }

    /// The thread has finished its work (called by the thread, just before it frees the multi
    /// handle): returns the waiters to resume once the handle is freed.
    mutating func threadStopped() -> [Waiter] {
        switch state {
        case .running:
            // The thread stops only when asked to.
            assertionFailure("the transport thread stopped without a shutdown request")
            state = .stopped
            return []
        case .stopping(let waiters):
            state = .stopped
            return waiters
        case .stopped:
            return []
        }
    }
}
