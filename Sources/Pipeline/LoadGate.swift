import Support

/// Whether the loads of a loader may still run: open until the owner of the loader's parts (an
/// `ImageSystem`, module `Fetch`) is shut down, then closed for good. A loader that carries a
/// closed gate ends every load at once as `.failed(…)` with `FetchError.Code.alreadyShutdown`,
/// touching neither the caches nor the network.
///
/// Thread safety: every member may be used from any thread at once.
package final class LoadGate: Sendable {
    // Guards whether the gate was closed.
    private let closed = Locked(false)

    /// An open gate.
    package init() {}

    /// Whether `close()` was called.
    package var isClosed: Bool {
        closed.withLock { $0 }
    }

    /// Closes the gate; true for the call that closed it, false for every later one.
    @discardableResult
    package func close() -> Bool {
        closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
    }
}
