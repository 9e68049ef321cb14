import Locking

/// The downloads waiting out a backoff before their next attempt: each waits on the transport's
/// clock, and `networkReturned()` ends every wait at once (the network the last attempt lacked is
/// back). Cancelling the waiting task ends its wait at once too.
///
/// A network return counts for every attempt that began before it (`generation`), so that a
/// return that happens between an attempt's failure and the start of its wait is not missed.
///
/// Thread safety: every method may be called from any thread at once; continuations are resumed
/// outside the lock.
final class BackoffWaits: Sendable {
    private enum Slot {
        case waiting(CheckedContinuation<Void, Never>)
        /// Cancelled before its continuation was stored.
        case cancelled
    }

    private struct State {
        var generation = 0
        var slots: [Int: Slot] = [:]
        var nextID = 0
    }

    // Guards the generation and the waiting continuations.
    private let state = Locked(State())

    /// How many times the network returned: an attempt notes it before it starts.
    var generation: Int { state.withLock { $0.generation } }

    /// Ends every wait on the network now.
    func networkReturned() {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.generation += 1
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, slot) in state.slots {
                if case .waiting(let continuation) = slot {
                    woken.append(continuation)
                    state.slots[id] = nil
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits `delay` on `clock`, or until the network returns after `generation` when one is
    /// given (nil: only the clock ends the wait, as for a server's `Retry-After`). Throws
    /// `CancellationError` when the task is cancelled, at once.
    func wait(_ delay: Duration, on clock: any Clock<Duration>, orNetworkReturnAfter generation: Int?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clock.sleep(for: delay) }
            if let generation {
                group.addTask { await self.networkReturn(after: generation) }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        try Task.checkCancellation()
    }

    /// Returns when the network returns after `generation` (at once if it has), or the task is
    /// cancelled.
    private func networkReturn(after generation: Int) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation > generation { return true }
                    if case .cancelled? = state.slots.removeValue(forKey: id) { return true }
                    state.slots[id] = .waiting(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
            // A cancellation that came after the wake-up left a mark: forget it.
            state.withLock { _ = $0.slots.removeValue(forKey: id) }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
                if case .waiting(let continuation)? = state.slots.removeValue(forKey: id) { return continuation }
                state.slots[id] = .cancelled
                return nil
            }
            continuation?.resume()
        }
    }
}
