import Support
import HTTPSemantics

/// The downloads waiting out a backoff before their next attempt: each waits on the transport's
/// clock; `networkReturned()` ends every backoff wait at once (the network the last attempt lacked
/// is back), but not a wait a server asked for; `close()` (the transport's shutdown) ends every
/// wait, now and later. Cancelling the waiting task ends its wait at once too.
///
/// A network return counts for every attempt that began before it (`generation`), so that a
/// return that happens between an attempt's failure and the start of its wait is not missed.
///
/// Thread safety: every method may be called from any thread at once; continuations are resumed
/// outside the lock.
final class BackoffWaits: Sendable {
    private enum Slot {
        /// `network`: whether the network's return ends the wait.
        case waiting(CheckedContinuation<Void, Never>, network: Bool)
        /// Cancelled before its continuation was stored.
        case cancelled
    }

    private struct State {
        var generation = 0
        var closed = false
        var slots: [Int: Slot] = [:]
        var nextID = 0
    }

    // Guards the generation and the waiting continuations.
    private let state = Locked(State())

    /// How many times the network returned: an attempt notes it before it starts.
    var generation: Int { state.withLock { $0.generation } }

    /// Ends every wait on the network now.
    func networkReturned() {
        end { state in
            state.generation += 1
            return true
        }
    }

    /// Ends every wait now, and every later one at once: the transport is shutting down.
    func close() {
        end { state in
            state.closed = true
            return false
        }
    }

    /// Applies `change`, which says whether only the waits the network ends are ended, and
    /// resumes the waits ended, outside the lock.
    private func end(_ change: (inout State) -> Bool) {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            let networkOnly = change(&state)
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, slot) in state.slots {
                if case .waiting(let continuation, let network) = slot, network || !networkOnly {
                    woken.append(continuation)
                    state.slots[id] = nil
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits `delay` on `clock`, or until the network returns after `generation` when one is
    /// given (nil: the network's return does not end the wait, as for a server's `Retry-After`),
    /// or until `close()`. Throws `CancellationError` when the task is cancelled, at once, and
    /// when the waits were closed (no attempt may follow a shutdown).
    func wait(_ delay: Duration, on clock: any Clock<Duration>, orNetworkReturnAfter generation: Int?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clock.sleep(for: delay) }
            group.addTask { await self.end(after: generation) }
            defer { group.cancelAll() }
            try await group.next()
        }
        try Task.checkCancellation()
        if state.withLock({ $0.closed }) { throw CancellationError() }
    }

    /// Returns when the network returns after `generation` (if given; at once if it has), when
    /// the waits are closed, or when the task is cancelled.
    private func end(after generation: Int?) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.closed { return true }
                    if let generation, state.generation > generation { return true }
                    if case .cancelled? = state.slots.removeValue(forKey: id) { return true }
                    state.slots[id] = .waiting(continuation, network: generation != nil)
                    return false
                }
                if now { continuation.resume() }
            }
            // A cancellation that came after the wake-up left a mark: forget it.
            state.withLock { _ = $0.slots.removeValue(forKey: id) }
        } onCancel: {
            let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
                if case .waiting(let continuation, _)? = state.slots.removeValue(forKey: id) { return continuation }
                state.slots[id] = .cancelled
                return nil
            }
            continuation?.resume()
        }
    }
}
