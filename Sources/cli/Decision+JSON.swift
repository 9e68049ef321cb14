import Policy
import Support

extension Decision {
    /// The `--json` object of a decision: exactly `action`, `variant`, `url`, `rule`, `reason`,
    /// `network`, in that order, then `rung` (`{"width", "bytes"}`) for a decision of a rule that
    /// chose a rung of known width. `network` is the state the decision was made on, as
    /// `IMGPOLICY_NETWORK` writes it (`wifi,captive`, `cellular,expensive,roaming`), so that it
    /// agrees with the reason (a captive Wi-Fi is decided as offline).
    var jsonMembers: [(key: String, value: JSONValue)] {
        func string(_ text: String?) -> JSONValue { JSONValue(text.map { .string($0) } ?? .null) }
        var members: [(key: String, value: JSONValue)] = [
            ("action", string(action.kind.rawValue)),
            ("variant", string(variant?.rawValue)),
            ("url", string(url?.absoluteString)),
            ("rule", string(rule)),
            ("reason", string(reason)),
            ("network", string(network.description)),
        ]
        if let rung {
            let bytes = rung.bytes.map { JSONValue(.number(String($0))) } ?? JSONValue(.null)
            members.append(("rung", JSONValue(.object([("width", JSONValue(.number(String(rung.width)))), ("bytes", bytes)]))))
        }
        return members
    }
}
