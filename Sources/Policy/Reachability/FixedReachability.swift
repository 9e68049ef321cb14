import Support

/// A reachability provider whose state is whatever it was last set to: the test double, and
/// what the CLI uses for `--network wifi`.
///
/// ```swift
/// let reachability = FixedReachability(NetworkState(.wifi))
/// reachability.update(to: NetworkState(.cellular))   // every stateChanges() stream sees it
/// ```
public final class FixedReachability: ReachabilityProviding {
    private struct State {
        var current: NetworkState
        var continuations: [Int: AsyncStream<NetworkState>.Continuation] = [:]
        var nextID = 0
    }

    // Guards the current state and the open streams.
    private let state: Locked<State>

    /// Creates a provider reporting `state`.
    public init(_ state: NetworkState) {
        self.state = Locked(State(current: state))
    }

    /// The network state now.
    public var currentState: NetworkState {
        state.withLock { $0.current }
    }

    /// Sets the state; open streams receive it if it differs from the previous one.
    public func update(to newState: NetworkState) {
        let continuations: [AsyncStream<NetworkState>.Continuation] = state.withLock { state in
            guard state.current != newState else { return [] }
            state.current = newState
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.yield(newState) }
    }

    /// The state now, then each change (see `ReachabilityProviding`).
    public func stateChanges() -> AsyncStream<NetworkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkState.self, bufferingPolicy: .bufferingNewest(16))
        let id: Int = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            continuation.yield(state.current)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }
}
