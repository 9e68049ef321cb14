import Policy

/// What one detection found, with the steps that led there (for `imgpolicy network`).
public struct NetworkDetection: Sendable, Hashable {
    /// The state.
    public var state: NetworkState
    /// The interface carrying traffic, if one was found.
    public var interface: NetworkInterface?
    /// Every interface seen.
    public var interfaces: [NetworkInterface]
    /// Why, step by step.
    public var reasons: [String]

    /// Creates a detection.
    public init(state: NetworkState, interface: NetworkInterface?, interfaces: [NetworkInterface], reasons: [String]) {
        self.state = state
        self.interface = interface
        self.interfaces = interfaces
        self.reasons = reasons
    }
}
