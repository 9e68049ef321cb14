#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Locking

/// A POSIX thread running one body, joined or detached exactly once: the event loops' threads
/// (blocking `poll`, never the cooperative pool).
///
/// Thread safety: every method may be called from any thread at once.
final class OwnedThread: Sendable {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    // The handle until the thread is joined or detached; nil after.
    private let handle: Locked<pthread_t?>

    /// Starts a thread running `body`.
    /// - Throws: `StartError` with the code `pthread_create` returned.
    init(_ body: @escaping @Sendable () -> Void) throws(LinuxReachability.StartError) {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw LinuxReachability.StartError(operation: "pthread_create", code: created)
        }
        handle = Locked(thread)
    }

    /// Waits for the thread to end (blocking). Only the first call to `join` or `detach` acts.
    func join() {
        if let thread = take() { pthread_join(thread, nil) }
    }

    /// Lets the thread end on its own and release its resources then.
    func detach() {
        if let thread = take() { pthread_detach(thread) }
    }

    private func take() -> pthread_t? {
        handle.withLock { handle in
            defer { handle = nil }
            return handle
        }
    }
}
