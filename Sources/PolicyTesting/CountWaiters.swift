/// Tasks waiting until a count (of observers, of sleepers) reaches the number each asked for.
/// A value kept under its owner's lock; the continuations it hands back are resumed by the owner
/// after the lock is released.
package struct CountWaiters: Sendable {
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// No waiters.
    package init() {}

    /// Keeps `continuation` until the count reaches `count`; returns false (and keeps nothing)
    /// when `current` already has, so that the caller resumes it at once.
    package mutating func wait(for count: Int, current: Int, _ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard current < count else { return false }
        waiters.append((count, continuation))
        return true
    }

    /// Takes out the waiters whose count `current` reaches, to be resumed outside the lock.
    package mutating func released(at current: Int) -> [CheckedContinuation<Void, Never>] {
        let ready = waiters.filter { current >= $0.count }.map(\.continuation)
        waiters.removeAll { current >= $0.count }
        return ready
    }
}
