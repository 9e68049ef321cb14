import Policy
import Support

extension RungSelection {
    /// The rule's `"rung"` as a policy file writes it: `"smallest"`, `"covering"`, `"widest"`,
    /// or `{"covering": 1.0, "maxWidth": 1280, "maxBytes": 150000, "within": 3000}` with the
    /// members it has (`within` in milliseconds).
    var policyJSON: JSONValue {
        switch self {
        case .showCached(let choice):
            return JSONValue(.string(choice.rawValue))
        case .load(let choice):
            guard case .covering(let factor) = choice.target else { return JSONValue(.string("smallest")) }
            var members: [(key: String, value: JSONValue)] = [("covering", JSONValue(.number(String(factor))))]
            if let maxWidth = choice.maxWidth { members.append(("maxWidth", JSONValue(.number(String(maxWidth))))) }
            if let maxBytes = choice.maxBytes { members.append(("maxBytes", JSONValue(.number(String(maxBytes))))) }
            if let within = choice.withinMilliseconds { members.append(("within", JSONValue(.number(String(within))))) }
            return JSONValue(.object(members))
        }
    }
}
