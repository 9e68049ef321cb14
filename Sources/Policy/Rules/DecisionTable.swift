/// A policy compiled to a lookup table: one entry per possible input, holding the rule that
/// fires and its action. Built once by `PolicyValidator`; read by `ImagePolicy.outcome(for:)`.
@usableFromInline
struct DecisionTable: Sendable {
    @usableFromInline let entries: ContiguousArray<PolicyOutcome>
    /// `count - 1`; the count is a power of two, so masking keeps any key in range.
    @usableFromInline let mask: Int

    init(entries: ContiguousArray<PolicyOutcome>) {
        precondition(entries.count > 0 && entries.count & (entries.count - 1) == 0)
        self.entries = entries
        self.mask = entries.count - 1
    }

    /// The number of entries: 2048 × 2^(settings).
    var count: Int { entries.count }

    @inlinable
    func outcome(forKey key: Int) -> PolicyOutcome {
        entries[key & mask]
    }
}
