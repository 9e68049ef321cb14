import Policy
import Support

/// The network a simulation's script says, as a `ReachabilityProviding` the list follows: `set(_:)`
/// yields the new state to every open `stateChanges()` stream.
///
/// The simulation's own provider rather than `PolicyTesting`'s `DrivenReachability`: the shipped
/// `imgpolicy` binary links no test double. It needs none of that double's test affordances
/// (waiting for observers, the history of states).
final class ScriptedReachability: ReachabilityProviding {
    private struct State {
        var current: NetworkState
        var streams: [Int: AsyncStream<NetworkState>.Continuation] = [:]
        var nextID = 0
    }

    private let state: Locked<State>

    init(_ initial: NetworkState) {
        state = Locked(State(current: initial))
    }

    var currentState: NetworkState {
        state.withLock { $0.current }
    }

    /// The state now, then each change (see `ReachabilityProviding`).
    func stateChanges() -> AsyncStream<NetworkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkState.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            continuation.yield(state.current)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Reports `network` to every open stream (nothing when it is the state already).
    func set(_ network: NetworkState) {
        let streams: [AsyncStream<NetworkState>.Continuation] = state.withLock { state in
            guard state.current != network else { return [] }
            state.current = network
            return Array(state.streams.values)
        }
        for stream in streams { stream.yield(network) }
    }
}
