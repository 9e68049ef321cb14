import Support
/// What NetworkManager and ModemManager say, over D-Bus: whether the link is metered, whether
/// a captive portal (or a missing upstream) stands between it and the internet, and whether the
/// modem is roaming. Each fact may be unknown, and says why.
///
/// ## See Also
///
/// - <doc:NetworkStateAndSources>
public struct ServiceFacts: Sendable, Hashable {
    /// NetworkManager's `Metered` property: yes and guess-yes are metered.
    public var metered: NetworkFact
    /// NetworkManager's `Connectivity`: portal, limited and none are captive; full is not.
    public var captive: NetworkFact
    /// ModemManager's 3GPP registration state: roaming (and its SMS-only and CSFB variants).
    public var roaming: NetworkFact

    /// Creates facts.
    public init(metered: NetworkFact, captive: NetworkFact, roaming: NetworkFact) {
        self.metered = metered
        self.captive = captive
        self.roaming = roaming
    }

    /// Every fact unknown for the same reason (no system bus, not asked).
    public static func unknown(_ why: String) -> ServiceFacts {
        ServiceFacts(metered: .unknown(why), captive: .unknown(why), roaming: .unknown(why))
    }

    /// NetworkManager's `Metered` (NMMetered: 0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no).
    static func metered(networkManagerValue value: UInt32) -> NetworkFact {
        switch value {
        case 1: return NetworkFact(true, "NetworkManager: Metered is yes (1)")
        case 2: return NetworkFact(false, "NetworkManager: Metered is no (2)")
        case 3: return NetworkFact(true, "NetworkManager: Metered is guess-yes (3)")
        case 4: return NetworkFact(false, "NetworkManager: Metered is guess-no (4)")
        case 0: return .unknown("NetworkManager: Metered is unknown (0)")
        default: return .unknown("NetworkManager: Metered is \(value), which is not a known value")
        }
    }

    /// NetworkManager's `Connectivity` (NMConnectivityState: 0 unknown, 1 none, 2 portal,
    /// 3 limited, 4 full).
    static func captive(networkManagerConnectivity value: UInt32) -> NetworkFact {
        switch value {
        case 1: return NetworkFact(true, "NetworkManager: Connectivity is none (1): the link is up but reaches nothing")
        case 2: return NetworkFact(true, "NetworkManager: Connectivity is portal (2): a captive portal wants a login")
        case 3: return NetworkFact(true, "NetworkManager: Connectivity is limited (3): no internet through the link")
        case 4: return NetworkFact(false, "NetworkManager: Connectivity is full (4)")
        case 0: return .unknown("NetworkManager: Connectivity is unknown (0) (checking may be off)")
        default: return .unknown("NetworkManager: Connectivity is \(value), which is not a known value")
        }
    }

    /// The 3GPP registration states of ModemManager's modems (MMModem3gppRegistrationState):
    /// roaming is 5, roaming-SMS-only 7, roaming-CSFB-not-preferred 10.
    static func roaming(registrationStates states: [UInt32]) -> NetworkFact {
        guard !states.isEmpty else { return NetworkFact(false, "ModemManager: no modem with a 3GPP registration") }
        let names: [UInt32: String] = [0: "idle", 1: "home", 2: "searching", 3: "denied", 4: "unknown", 5: "roaming",
                                       6: "home-sms-only", 7: "roaming-sms-only", 8: "emergency-only",
                                       9: "home-csfb-not-preferred", 10: "roaming-csfb-not-preferred", 11: "attached-rlos"]
        let described = states.map { "\(names[$0] ?? "unknown value") (\($0))" }.joined(separator: ", ")
        let roaming = states.contains { [5, 7, 10].contains($0) }
        return NetworkFact(roaming, "ModemManager: 3GPP registration " + described)
    }
}
