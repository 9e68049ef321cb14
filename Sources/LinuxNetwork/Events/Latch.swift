import Support

/// A one-way gate: tasks wait until it opens, once; waiting on an open latch returns at once.
/// For "the thread has ended" and "the bus has been asked once".
///
/// Thread safety: every method may be called from any thread at once.
final class Latch: Sendable {
    private struct State: Sendable {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    // Whether the latch is open, and who waits for it.
    private let state = Locked(State())

    /// Opens the latch and resumes every waiter (outside the lock). Later calls do nothing.
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the latch is open.
    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if !state.isOpen { state.waiters.append(waiter) }
                return state.isOpen
            }
            if open { waiter.resume() }
        }
    }
}
