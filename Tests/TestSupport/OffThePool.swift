import Foundation

/// Runs `body` (a blocking call: a process run to its end, a slow system call) on a thread of its
/// own and suspends the calling task until it returns, so that tests waiting for processes never
/// hold the few threads of Swift's cooperative pool (2 on a 2-core machine) that every other test
/// running in parallel needs.
///
/// The wait has a deadline (`seconds`, 10 minutes unless told): when `body` has not returned by
/// then, the caller gets `DeadlineExceeded` and the test fails instead of hanging the suite (the
/// thread stays blocked in `body`; the process ends with the test run).
@discardableResult
public func offThePool<T: Sendable>(seconds: Double = 600, _ waitingFor: String = "a blocking call on a thread of its own",
                                    fileID: String = #fileID, line: Int = #line,
                                    _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let exceeded = DeadlineExceeded(waitingFor: waitingFor, seconds: seconds, location: "\(fileID):\(line)")
    let waiter = ThreadWaiter<T>()
    return try await withCheckedThrowingContinuation { continuation in
        waiter.start(continuation)
        Thread.detachNewThread {
            waiter.resume(with: Result { try body() })
        }
        waiter.watch(Task.detached {
            guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }   // the body returned first
            waiter.resume(with: .failure(exceeded))
        })
    }
}

/// The continuation of an `offThePool` call, resumed once: by the thread or by the deadline,
/// whichever comes first.
private final class ThreadWaiter<T: Sendable>: @unchecked Sendable {
    // Guards `continuation` (set by `start`, taken by the first `resume`) and `timer` (the
    // deadline's task, cancelled by the first `resume`, or at once when it comes after it).
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var resumed = false
    private var timer: Task<Void, Never>?

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        lock.withLock { self.continuation = continuation }
    }

    func watch(_ timer: Task<Void, Never>) {
        let late = lock.withLock { () -> Bool in
            if !resumed { self.timer = timer }
            return resumed
        }
        if late { timer.cancel() }
    }

    func resume(with result: Result<T, any Error>) {
        let (continuation, timer) = lock.withLock { () -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            defer { (self.continuation, self.timer, resumed) = (nil, nil, true) }
            return (self.continuation, self.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }
}

/// Whether this test process runs under ThreadSanitizer (`scripts/tsan.sh` sets `TSAN_OPTIONS`).
/// A few tests that time signals or kills against a process's progress are left to the plain run
/// (`scripts/test.sh`): under ThreadSanitizer the command runs several times slower and its signals
/// are deferred, which changes what they measure, not what the sanitizer looks for.
public let runningUnderThreadSanitizer = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil
