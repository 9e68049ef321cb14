import LinuxNetwork
import Policy
import Support

/// One network state with where it comes from, printed by `imgpolicy network`: as text (a
/// headline, the detection's steps, each source), as one text line (`--watch`), or as one JSON
/// object.
struct NetworkReport {
    var state: NetworkState
    var override: EnvironmentReachability?
    var detection: NetworkDetection
    var facts: ServiceFacts

    /// Why the state is what it is, in one line: the detection's conclusion, then each service
    /// fact that changed it.
    var reason: String {
        if override != nil { return "set by \(EnvironmentReachability.variable)" }
        var parts = [detection.reasons.last ?? "nothing detected"]
        guard state.kind != .offline else { return parts[0] }
        if facts.metered.value == true { parts.append(facts.metered.explanation) }
        if facts.captive.value == true { parts.append(facts.captive.explanation) }
        if state.isRoaming { parts.append(facts.roaming.explanation) }
        return parts.joined(separator: "; ")
    }

    /// The full text of `imgpolicy network`.
    var text: String {
        var lines: [String] = []
        if override != nil {
            lines.append("network: \(state) (from \(EnvironmentReachability.variable), which overrides detection)")
            lines.append("detected: \(LinuxReachability.combine(detection.state, facts))")
        } else {
            lines.append("network: \(state)")
        }
        lines += detection.reasons.map { "  " + $0 }
        lines.append("sources:")
        lines.append("  kernel (sysfs, routes): \(detection.state)" + (detection.interface.map { " via \($0.name)" } ?? ""))
        lines.append("  metered (NetworkManager): \(facts.metered)")
        lines.append("  captive (NetworkManager): \(facts.captive)")
        lines.append("  roaming (ModemManager): \(facts.roaming)")
        return lines.joined(separator: "\n")
    }

    /// One line for `--watch`: the state, the interface, why.
    var line: String {
        "\(state) interface=\(detection.interface?.name ?? "none") reason=\(reason)"
    }

    /// One JSON object on one line.
    var jsonLine: String {
        func fact(_ fact: NetworkFact) -> JSONValue {
            JSONValue(.object([("value", JSONValue(fact.value.map { .bool($0) } ?? .null)),
                               ("explanation", JSONValue(.string(fact.explanation)))]))
        }
        let members: [(key: String, value: JSONValue)] = [
            ("state", JSONValue(.string(state.description))),
            ("kind", JSONValue(.string(state.kind.rawValue))),
            ("expensive", JSONValue(.bool(state.isExpensive))),
            ("constrained", JSONValue(.bool(state.isConstrained))),
            ("roaming", JSONValue(.bool(state.isRoaming))),
            ("captive", JSONValue(.bool(state.isCaptive))),
            ("interface", JSONValue(detection.interface.map { .string($0.name) } ?? .null)),
            ("reason", JSONValue(.string(reason))),
            ("source", JSONValue(.string(override == nil ? "detected" : EnvironmentReachability.variable))),
            ("sources", JSONValue(.object([
                ("kernel", JSONValue(.object([("state", JSONValue(.string(detection.state.description))),
                                              ("reasons", JSONValue(.array(detection.reasons.map { JSONValue(.string($0)) })))]))),
                ("metered", fact(facts.metered)),
                ("captive", fact(facts.captive)),
                ("roaming", fact(facts.roaming)),
            ]))),
        ]
        return JSONWriter.compactText(of: JSONValue(.object(members)))
    }
}
