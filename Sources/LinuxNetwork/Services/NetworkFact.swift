/// One thing a system service said about the network, or why nothing is known: `true`,
/// `false`, or nil (unknown), with the words that explain it (`NetworkManager: Metered is
/// guess-yes (3)`, `ModemManager is not running`).
public struct NetworkFact: Sendable, Hashable, CustomStringConvertible {
    /// The fact; nil when unknown.
    public var value: Bool?
    /// Where it comes from and what was said, or why it is unknown.
    public var explanation: String

    /// Creates a fact.
    public init(_ value: Bool?, _ explanation: String) {
        self.value = value
        self.explanation = explanation
    }

    /// An unknown fact, and why.
    public static func unknown(_ why: String) -> NetworkFact { NetworkFact(nil, why) }

    /// `yes`, `no` or `unknown`, then the explanation.
    public var description: String {
        (value.map { $0 ? "yes" : "no" } ?? "unknown") + ": " + explanation
    }
}
