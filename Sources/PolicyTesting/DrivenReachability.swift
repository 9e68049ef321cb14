import Support
import Policy

/// A reachability provider a test drives: set the state, and every open `stateChanges()` stream
/// yields it. For an app's own tests (as swift-log's `InMemoryLogging` is for logging).
///
/// Beyond `FixedReachability` (which the CLI uses), it lets a test wait until the code under test
/// has started observing (`waitForObservers(_:)`), so that a change is never set before anyone
/// listens; it keeps every state it was set to (`history`), and can end every stream
/// (`finishObservers()`), as a provider that shuts down would.
///
/// ```swift
/// import PolicyTesting
///
/// @Test func theListLoadsThumbnailsOnceOnCellular() async throws {
///     let reachability = DrivenReachability(NetworkState(.wifi))
///     let model = FeedModel(reachability: reachability)     // observes stateChanges()
///     await reachability.waitForObservers(1)
///     reachability.set(NetworkState(.cellular))
///     // … then wait for the model's state, as any test of asynchronous code does.
/// }
/// ```
///
/// Thread safety: every member may be used from any task or thread at once.
public final class DrivenReachability: ReachabilityProviding {
    private struct State {
        var current: NetworkState
        var history: [NetworkState]
        var streams: [Int: AsyncStream<NetworkState>.Continuation] = [:]
        var nextID = 0
        var waiters = CountWaiters()
    }

    // Guards the state, the open streams and the tasks waiting for observers.
    private let state: Locked<State>

    /// Creates a provider reporting `state` (Wi-Fi unless told otherwise).
    public init(_ state: NetworkState = NetworkState(.wifi)) {
        self.state = Locked(State(current: state, history: [state]))
    }

    /// The network state now.
    public var currentState: NetworkState {
        state.withLock { $0.current }
    }

    /// Every state this provider reported, the initial one first; a `set` to the current state
    /// is not repeated.
    public var history: [NetworkState] {
        state.withLock { $0.history }
    }

    /// How many `stateChanges()` streams are open (made and not yet ended by their consumer).
    public var observerCount: Int {
        state.withLock { $0.streams.count }
    }

    /// Makes `newState` the current state; every open stream yields it, unless it equals the
    /// current one (consecutive equal states are not repeated).
    public func set(_ newState: NetworkState) {
        let streams: [AsyncStream<NetworkState>.Continuation] = state.withLock { state in
            guard state.current != newState else { return [] }
            state.current = newState
            state.history.append(newState)
            return Array(state.streams.values)
        }
        for stream in streams { stream.yield(newState) }
    }

    /// The state now, then each change (see `ReachabilityProviding`).
    public func stateChanges() -> AsyncStream<NetworkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkState.self, bufferingPolicy: .bufferingNewest(64))
        let (id, ready): (Int, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            continuation.yield(state.current)
            return (id, state.waiters.released(at: state.streams.count))
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        for waiter in ready { waiter.resume() }
        return stream
    }

    /// Returns once at least `count` streams are open: the code under test is observing.
    public func waitForObservers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let kept = state.withLock { state in
                state.waiters.wait(for: count, current: state.streams.count, continuation)
            }
            if !kept { continuation.resume() }
        }
    }

    /// Ends every open stream: each consumer's `for await` loop finishes.
    public func finishObservers() {
        let streams = state.withLock { state in
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
