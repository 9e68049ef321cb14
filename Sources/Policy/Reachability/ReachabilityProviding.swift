/// Tells the policy what the network looks like: the state now, and its changes.
///
/// Implementations: `FixedReachability` (a state set by hand; tests, the CLI) and
/// `EnvironmentReachability` (`IMGPOLICY_NETWORK`) here; `LinuxReachability` in the `LinuxNetwork`
/// module (sysfs, the default route, netlink events). Apps on Apple platforms wrap `NWPathMonitor`
/// in a few lines.
///
/// Thread safety: implementations must be safe to call from any thread at once, and
/// `currentState` must be cheap enough to read before each batch of decisions.
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public protocol ReachabilityProviding: Sendable {
    /// The network state now.
    var currentState: NetworkState { get }

    /// The state now, then each change, until the consumer stops iterating. Consecutive equal
    /// states are not repeated.
    func stateChanges() -> AsyncStream<NetworkState>
}
