import CCurl
import Support
import Synchronization
import HTTPSemantics


/// What callers and the transport thread share: the line of transfers, the lifecycle, and the
/// means to wake the thread. Callers enqueue and cancel; the thread takes work.
///
/// The thread holds this object, never the `CurlTransport`, so that a transport nobody references
/// any more is deinitialised (and stops its thread) instead of living forever in a cycle.
///
/// Thread safety: every method may be called from any thread at once.
final class TransferScheduler: @unchecked Sendable {
    struct State {
        var queue: TransferQueue
        var lifecycle = TransportLifecycle<ShutdownWaiter>()
    }

    // Guards the line of transfers and the lifecycle. `curl_multi_wakeup` is called under it, so
    // that no wake-up can reach the multi handle after the thread has freed it (`threadStopped`).
    private let state: Locked<State>
    // Immutable; `curl_multi_wakeup` may be called from any thread while the handle lives. Nil
    // when the transport could not start (no multi handle, no thread).
    private let multi: UnsafeMutableRawPointer?
    // What bursts are gathered on (`TransportHooks.gatheringClock`), in nanoseconds.
    private let clock: @Sendable () -> UInt64

    /// curl handles alive (the multi handle and every easy handle), counted by the thread: after a
    /// shutdown, 0. For tests.
    let openHandles = Atomic<Int>(1)

    /// `multi` is owned by the thread, which frees it after `threadStopped()`; nil for a transport
    /// that could not start (then `stoppedWithoutThread()` follows at once). `clock`: monotonic
    /// nanoseconds, what bursts are gathered on.
    init(configuration: TransportConfiguration, multi: UnsafeMutableRawPointer?,
         clock: @escaping @Sendable () -> UInt64 = TransferScheduler.monotonicNanoseconds) {
        self.clock = clock
        // At most 10 s (a longer window is a mistake, not a wish); none when zero or negative.
        let window = min(10, max(0, configuration.gatheringWindow / .seconds(1)))
        state = Locked(State(queue: TransferQueue(maximumConnections: configuration.maximumConnections,
                                                  maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
                                                  gatheringWindow: UInt64(window * 1e9))))
        self.multi = multi
    }

    // MARK: - Called by callers

    /// Queues `transfer`; false (and nothing queued) once a shutdown was asked for.
    func enqueue(_ transfer: Transfer) -> Bool {
        state.withLock { state in
            guard state.lifecycle.isRunning else { return false }
            // Every slot taken: the thread chooses again when it frees one, no wake-up needed
            // (5,000 requests made at once would otherwise wake it 5,000 times).
            // Also when it opens a gathering: the thread must then wait for its end, not longer.
            if state.queue.enqueue(transfer, now: clock()) { wake(ifAlive: state.lifecycle) }
            return true
        }
    }

    /// Marks `transfer` cancelled and has the thread stop it (and free its slot) at once.
    func cancel(_ transfer: Transfer) {
        transfer.markCancelled()
        state.withLock { state in
            guard state.lifecycle.threadIsAlive else { return }
            state.queue.cancel(transfer)
            wake(ifAlive: state.lifecycle)
        }
    }

    /// Holds (true) or releases (false) the transfers not started yet.
    func setSuspended(_ suspended: Bool) {
        state.withLock { state in
            state.queue.suspended = suspended
            if !suspended { wake(ifAlive: state.lifecycle) }
        }
    }

    /// Transfers running and waiting.
    var load: (running: Int, waiting: Int) {
        state.withLock { ($0.queue.running, $0.queue.waiting) }
    }

    /// Whether the thread has stopped and freed its handles.
    var hasStopped: Bool {
        state.withLock { !$0.lifecycle.threadIsAlive }
    }

    /// Asks for a shutdown; `waiter` (nil: nobody waits) is resumed once the thread has stopped.
    /// Returns `.wakeThread` for the first request (the transport was running until now).
    @discardableResult
    func requestShutdown(_ waiter: ShutdownWaiter?) -> TransportLifecycle<ShutdownWaiter>.ShutdownAction {
        let action = state.withLock { state in
            let action = state.lifecycle.requestShutdown(waiter)
            if action == .wakeThread { wake(ifAlive: state.lifecycle) }
            return action
        }
        if action == .resumeNow { waiter?.resume() }
        return action
    }

    // MARK: - Called by the transport thread

    /// The transfers to stop now, and whether the thread must stop (then every waiting transfer
    /// is among them, and nothing new can be queued).
    func takeCancellations() -> (cancel: [Transfer], stop: Bool) {
        state.withLock { state in
            let stop = state.lifecycle.isStopping
            return (state.queue.takeCancellations(everything: stop), stop)
        }
    }

    /// The transfers that may start now, counted as running, and, while transfers are being
    /// gathered (`TransferQueue`), how long the thread may wait before it chooses again, in
    /// milliseconds (at least 1).
    func takeStartable() -> (start: [Transfer], gatheringFor: Int32?) {
        let now = clock()
        return state.withLock { state in
            let start = state.queue.takeStartable(now: now)
            let left = state.queue.gatheringEnds.map { $0 > now ? $0 - now : 0 }
            return (start, left.map { Int32(clamping: max(1, ($0 + 999_999) / 1_000_000)) })
        }
    }

    /// Nanoseconds of the monotonic clock: what the gathering of transfers is timed on.
    @Sendable static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Frees the connection slot of a transfer taken by `takeStartable`.
    func release(_ transfer: Transfer) {
        state.withLock { $0.queue.release(transfer) }
    }

    /// The thread is about to free the multi handle: no wake-up may reach it from now on. Returns
    /// the waiters to resume once it is freed.
    func threadStopped() -> [ShutdownWaiter] {
        state.withLock { $0.lifecycle.threadStopped() }
    }

    /// Wakes the thread from `curl_multi_poll` unless it has freed the multi handle. Called under
    /// the lock, which `threadStopped` takes before the handle is freed.
    private func wake(ifAlive lifecycle: TransportLifecycle<ShutdownWaiter>) {
        if lifecycle.threadIsAlive, let multi { curl_multi_wakeup(multi) }
    }

    /// The transport could not start its thread (or had no multi handle): it is stopped from the
    /// start, so that nothing is queued and a shutdown returns at once.
    func stoppedWithoutThread() {
        state.withLock { state in
            _ = state.lifecycle.requestShutdown(nil)
            _ = state.lifecycle.threadStopped()
        }
        openHandles.store(0, ordering: .releasing)
    }
}
