import Policy
import Support

extension Decision {
    /// The `--json` object of a decision: exactly `action`, `variant`, `url`, `rule`, `reason`,
    /// `network`, in that order. `network` is the state the decision was made on, as
    /// `IMGPOLICY_NETWORK` writes it (`wifi,captive`, `cellular,expensive,roaming`), so that it
    /// agrees with the reason (a captive Wi-Fi is decided as offline).
    var jsonMembers: [(key: String, value: JSONValue)] {
        func string(_ text: String?) -> JSONValue { JSONValue(text.map { .string($0) } ?? .null) }
        return [
            ("action", string(action.kind.rawValue)),
            ("variant", string(variant?.rawValue)),
            ("url", string(url?.absoluteString)),
            ("rule", string(rule)),
            ("reason", string(reason)),
            ("network", string(network.description)),
        ]
    }
}
