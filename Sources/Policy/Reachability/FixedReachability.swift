import Support

/// A reachability provider whose state is whatever it was last set to: what the CLI uses for
/// `--network wifi`, and what drives a simulation's scripted network.
///
/// ```swift
/// let reachability = FixedReachability(NetworkState(.wifi))
/// reachability.update(to: NetworkState(.cellular))   // every stateChanges() stream sees it
/// ```
public final class FixedReachability: ReachabilityProviding {
    private let broadcast: NetworkStateBroadcast

    /// Creates a provider reporting `state`.
    public init(_ state: NetworkState) {
        broadcast = NetworkStateBroadcast(state)
    }

    /// The network state now.
    public var currentState: NetworkState {
        broadcast.current
    }

    /// Sets the state; open streams receive it if it differs from the previous one.
    public func update(to newState: NetworkState) {
        broadcast.set(newState)
    }

    /// The state now, then each change (see `ReachabilityProviding`).
    public func stateChanges() -> AsyncStream<NetworkState> {
        broadcast.stream()
    }
}
