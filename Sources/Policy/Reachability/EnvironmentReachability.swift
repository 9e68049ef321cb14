import Support
/// The network state given by the environment variable `IMGPOLICY_NETWORK`
/// (`wifi`, `cellular`, `wired`, `offline` or `unknown`, optionally followed by any of
/// `,expensive`, `,constrained`, `,roaming` and `,captive`): for scripts, CI and field testing.
///
/// ## See Also
///
/// - <doc:TheCommand>
public struct EnvironmentReachability: ReachabilityProviding {
    /// `IMGPOLICY_NETWORK`.
    public static let variable = "IMGPOLICY_NETWORK"

    /// The variable holds something that is not a network state.
    public struct InvalidValue: Error, Sendable, Equatable, CustomStringConvertible {
        /// What the variable holds.
        public var value: String

        /// Creates the error for `value`.
        public init(value: String) { self.value = value }

        /// The one-line message.
        public var description: String {
            "\(EnvironmentReachability.variable)=\"\(value)\" is not a network state "
                + "(expected wifi, cellular, wired, offline or unknown, optionally followed by ,expensive ,constrained ,roaming ,captive)"
        }
    }

    /// The state the variable gives.
    public let state: NetworkState

    /// Reads the variable from `environment`; nil when it is not set or empty.
    /// - Throws: `InvalidValue` when it is set to something else than a network state.
    public init?(environment: [String: String]) throws(InvalidValue) {
        guard let text = environment[Self.variable], !text.isEmpty else { return nil }
        guard let state = NetworkState(parsing: text) else { throw InvalidValue(value: text) }
        self.state = state
    }

    /// The network state now.
    public var currentState: NetworkState { state }

    /// The environment does not change under a running process: the stream yields the state once
    /// and finishes.
    public func stateChanges() -> AsyncStream<NetworkState> {
        AsyncStream { continuation in
            continuation.yield(state)
            continuation.finish()
        }
    }
}
