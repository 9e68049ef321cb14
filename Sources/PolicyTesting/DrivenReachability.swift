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
        var history: [NetworkState]
        var waiters = CountWaiters()
    }

    // Guards the history and the tasks waiting for observers.
    private let state: Locked<State>
    // The state now and the open streams (Policy's one implementation of them).
    private let broadcast: NetworkStateBroadcast

    /// Creates a provider reporting `state` (Wi-Fi unless told otherwise).
    public init(_ state: NetworkState = NetworkState(.wifi)) {
        let recorded = Locked(State(history: [state]))
        self.state = recorded
        broadcast = NetworkStateBroadcast(state) { count in
            for waiter in recorded.withLock({ $0.waiters.released(at: count) }) { waiter.resume() }
        }
    }

    /// The network state now.
    public var currentState: NetworkState {
        broadcast.current
    }

    /// Every state this provider reported, the initial one first; a `set` to the current state
    /// is not repeated.
    public var history: [NetworkState] {
        state.withLock { $0.history }
    }

    /// How many `stateChanges()` streams are open (made and not yet ended by their consumer).
    public var observerCount: Int {
        broadcast.observerCount
    }

    /// Makes `newState` the current state; every open stream yields it, unless it equals the
    /// current one (consecutive equal states are not repeated).
    public func set(_ newState: NetworkState) {
        broadcast.set(newState) { changed in self.state.withLock { $0.history.append(changed) } }
    }

    /// The state now, then each change (see `ReachabilityProviding`).
    public func stateChanges() -> AsyncStream<NetworkState> {
        broadcast.stream()
    }

    /// Returns once at least `count` streams are open: the code under test is observing.
    public func waitForObservers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Never the broadcast's lock inside this provider's (`set` takes them the other way).
            let before = broadcast.observerCount
            guard state.withLock({ $0.waiters.wait(for: count, current: before, continuation) }) else {
                return continuation.resume()
            }
            // A stream opened after `before` was read may have reported before the waiter was
            // kept: look again (a waiter is taken out once, by whichever look releases it).
            let now = broadcast.observerCount
            for waiter in state.withLock({ $0.waiters.released(at: now) }) { waiter.resume() }
        }
    }

    /// Ends every open stream: each consumer's `for await` loop finishes.
    public func finishObservers() {
        broadcast.finishAll()
    }
}
