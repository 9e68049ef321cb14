#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex: the one lock type of the package.
///
/// `Synchronization.Mutex` on Linux is built on futexes that ThreadSanitizer cannot see, so a TSan
/// run of code guarded by it reports false data races (and misses real ones). This box uses
/// `pthread_mutex_t`, which TSan understands, in the manner of swift-nio's `NIOLockedValueBox`.
///
/// The closure given to `withLock` must not call out to code that may take the same lock: the
/// mutex is not recursive. Never call an app's handler or resume a continuation inside it.
///
/// Thread safety: every method may be called from any thread at once.
package final class Locked<Value>: @unchecked Sendable {
    // `value` is read and written only while `mutex` is held.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A box holding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let created = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(created == 0, "pthread_mutex_init failed: \(created)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&valueStorage)
    }

    @usableFromInline
    package var valueStorage: Value {
        _read { yield value }
        _modify { yield &value }
    }

    @usableFromInline
    package func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    @usableFromInline
    package func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
    }
}
