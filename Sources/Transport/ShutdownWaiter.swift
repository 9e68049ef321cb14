#if canImport(Darwin)
import Dispatch
#endif
import HTTPSemantics
import Support

/// Whoever waits for a `CurlTransport` to finish shutting down: a task (`shutdown()`) or a blocked
/// thread (`syncShutdown()`).
enum ShutdownWaiter: Sendable {
    case task(CheckedContinuation<Void, Never>)
    case thread(ThreadSignal)

    /// Lets the waiter go on. Called exactly once per waiter, never under a lock.
    func resume() {
        switch self {
        case .task(let continuation): continuation.resume()
        case .thread(let signal): signal.signal()
        }
    }
}

/// A one-shot signal a thread blocks on: no spinning, and ThreadSanitizer sees the hand-over from
/// `signal()` to `wait()` (a POSIX semaphore on Linux; Dispatch on Darwin, which has no `sem_init`).
package final class ThreadSignal: @unchecked Sendable {
    #if canImport(Darwin)
    // Thread-safe by itself.
    private let semaphore = DispatchSemaphore(value: 0)

    /// A signal not given yet.
    package init() {}

    /// Wakes the thread in `wait()` (or lets its next `wait()` return at once).
    package func signal() { semaphore.signal() }

    /// Blocks until `signal()`.
    package func wait() { semaphore.wait() }
    #else
    // The semaphore is thread-safe by itself; the pointer never changes.
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// A signal not given yet.
    package init() {
        semaphore = .allocate(capacity: 1)
        let created = sem_init(semaphore, 0, 0)
        precondition(created == 0, "sem_init failed: \(errno)")
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes the thread in `wait()` (or lets its next `wait()` return at once).
    package func signal() {
        sem_post(semaphore)
    }

    /// Blocks until `signal()`.
    package func wait() {
        while sem_wait(semaphore) != 0 {
            precondition(errno == EINTR, "sem_wait failed: \(errno)")
        }
    }
    #endif
}
