import Locking

/// A load's priority, shared between whoever asked for the load and the transport, which reads it
/// each time it chooses the next transfer to start: changing it reorders a transfer still waiting
/// (a row scrolled onto the screen overtakes prefetching), and has no effect on one running.
///
/// Thread safety: read and set from any thread.
///
/// ## See Also
///
/// - <doc:EmbeddingInAList>
public final class RequestPriority: Sendable {
    // Guards the value.
    private let state: Locked<LoadPriority>

    /// Creates a priority holding `value`.
    public init(_ value: LoadPriority = .visible) {
        state = Locked(value)
    }

    /// The priority now.
    public var value: LoadPriority {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
