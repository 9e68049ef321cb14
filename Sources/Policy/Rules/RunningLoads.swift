/// What happens to the loads already running when the network gets worse (Wi-Fi to cellular,
/// metered, roaming) and a decision made in the new state would not start them.
///
/// ```swift
/// if policy.runningLoads(on: newState, settings: settings) == .cancel { cancelLoadsTheNewStateWouldNotStart() }
/// ```
public enum RunningLoads: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Cancel them (the default): the worse network carries no byte the policy would not ask for now.
    case cancel
    /// Let them finish: the bytes already spent are not wasted, at the price of the rest.
    case finish

    /// `cancel` or `finish`, as in policy files.
    public var description: String { rawValue }
}
