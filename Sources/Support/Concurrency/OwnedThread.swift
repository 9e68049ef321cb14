#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread running one body, joined or detached exactly once: the package's one way to
/// start a thread of its own (the transport's, the event loops', the decoders', the settings
/// watcher's), for work that blocks and so must never run on Swift's cooperative pool.
///
/// Thread safety: every method may be called from any thread at once.
package final class OwnedThread: Sendable {
    /// `pthread_create` failed with `code` (an errno value, such as `EAGAIN`).
    package struct StartFailure: Error, Sendable {
        /// What `pthread_create` returned.
        package let code: Int32

        /// A failure with `code` (tests make one to stand for a refused thread).
        package init(code: Int32) {
            self.code = code
        }
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    // The handle until the thread is joined or detached; nil after.
    private let handle: Locked<pthread_t?>

    /// Starts a thread running `body`.
    /// - Throws: `StartFailure` with the code `pthread_create` returned.
    package init(_ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            #if canImport(Darwin)
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            #else
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            #endif
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw StartFailure(code: created)
        }
        #if canImport(Darwin)
        handle = Locked(thread)
        #else
        handle = Locked(Optional(thread))
        #endif
    }

    /// Starts a thread running `body` and lets it end on its own.
    /// - Throws: `StartFailure` with the code `pthread_create` returned.
    package static func detached(_ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        try OwnedThread(body).detach()
    }

    /// Waits for the thread to end (blocking). Only the first call to `join` or `detach` acts.
    package func join() {
        if let thread = take() { pthread_join(thread, nil) }
    }

    /// Lets the thread end on its own and release its resources then.
    package func detach() {
        if let thread = take() { pthread_detach(thread) }
    }

    private func take() -> pthread_t? {
        handle.withLock { handle in
            defer { handle = nil }
            return handle
        }
    }
}
