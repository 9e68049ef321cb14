import Policy

/// One consistent reading of the network: the kernel's detection, what the system services said,
/// and the state combined from exactly those two (`LinuxReachability.combine`). What
/// `imgpolicy network` prints and `imgpolicy decide --network auto` decides with.
///
/// ## See Also
///
/// - <doc:NetworkStateAndSources>
public struct NetworkSnapshot: Sendable, Hashable {
    /// The kernel's detection, with its steps.
    public var detection: NetworkDetection
    /// NetworkManager's and ModemManager's facts, each with its source or why it is unknown.
    public var facts: ServiceFacts
    /// `detection.state` combined with `facts`.
    public var state: NetworkState

    /// A snapshot of `detection` and `facts`; the state is combined from them.
    public init(detection: NetworkDetection, facts: ServiceFacts) {
        self.detection = detection
        self.facts = facts
        state = LinuxReachability.combine(detection.state, facts)
    }
}

extension NetworkDetector {
    /// Detects the state once and asks the system bus once (no listener, no thread): the
    /// one-shot reading of a command. Connecting, authenticating and each call give up after
    /// `busCallTimeout`, and after one call has timed out no other is made, so this returns within
    /// about twice `busCallTimeout` whatever the bus does (a bus that never answers: every fact
    /// unknown, "the bus at … did not answer within 1 s").
    ///
    /// - Parameters:
    ///   - systemBusAddress: the bus (nil: `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    ///   - busCallTimeout: how long connecting and each call may take.
    /// - Returns: the detection, the facts, and the state combined from them.
    public func detectWithServices(systemBusAddress: String? = nil, busCallTimeout: Duration = .seconds(1)) -> NetworkSnapshot {
        let detection = detect()
        let facts: ServiceFacts
        do {
            facts = try SystemBusConnection(address: systemBusAddress, callTimeout: busCallTimeout, dirty: nil).readFacts().facts
        } catch {
            facts = .unknown(error.description)
        }
        return NetworkSnapshot(detection: detection, facts: facts)
    }
}
