import Foundation

/// Runs `body` (a blocking call: a process run to its end, a slow system call) on a thread of its
/// own and suspends the calling task until it returns, so that tests waiting for processes never
/// hold the few threads of Swift's cooperative pool (2 on a 2-core machine) that every other test
/// running in parallel needs.
@discardableResult
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Whether this test process runs under ThreadSanitizer (`scripts/tsan.sh` sets `TSAN_OPTIONS`).
/// A few tests that time signals or kills against a process's progress are left to the plain run
/// (`scripts/test.sh`): under ThreadSanitizer the command runs several times slower and its signals
/// are deferred, which changes what they measure, not what the sanitizer looks for.
public let runningUnderThreadSanitizer = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil
