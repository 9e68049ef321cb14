import Policy

extension Decision {
    /// The `--json` object of a decision: exactly `action`, `variant`, `url`, `rule`, `reason`,
    /// `network`, in that order.
    var jsonMembers: [(key: String, value: JSONValue)] {
        func string(_ text: String?) -> JSONValue { JSONValue(text.map { .string($0) } ?? .null) }
        return [
            ("action", string(action.kind.rawValue)),
            ("variant", string(variant?.rawValue)),
            ("url", string(url?.absoluteString)),
            ("rule", string(rule)),
            ("reason", string(reason)),
            ("network", string(network.kind.rawValue)),
        ]
    }
}
