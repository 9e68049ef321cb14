/// A policy compiled to a lookup table: one entry per possible input, holding the rule that
/// fires and its action. Built once by `PolicyValidator`; read by `ImagePolicy.outcome(for:)`.
@usableFromInline
struct DecisionTable: Sendable {
    @usableFromInline let entries: ContiguousArray<PolicyOutcome>
    /// `count - 1`; the count is a power of two, so masking keeps any key in range.
    @usableFromInline let mask: Int
    /// The key bit of a slow link, just above the settings bits, for a policy with a rule that
    /// tests `slow` (its table is then twice as large); 0 for any other policy.
    @usableFromInline let slowBit: Int
    /// The key bits of "a rung is cached" and "a cached rung covers the display", above the slow
    /// bit, for a policy with a rule that tests them (its table is then four times as large); 0
    /// for any other policy.
    @usableFromInline let anyRungBit: Int
    @usableFromInline let coveringRungBit: Int

    init(entries: ContiguousArray<PolicyOutcome>, slowBit: Int = 0, anyRungBit: Int = 0, coveringRungBit: Int = 0) {
        precondition(entries.count > 0 && entries.count & (entries.count - 1) == 0)
        self.entries = entries
        self.mask = entries.count - 1
        self.slowBit = slowBit
        self.anyRungBit = anyRungBit
        self.coveringRungBit = coveringRungBit
    }

    /// The number of entries: 2048 × 2^(settings), twice that when the policy tests `slow`, four
    /// times that when it tests cached rungs.
    var count: Int { entries.count }

    /// The outcome for `input`: its key, with the slow bit when the table has one.
    @inlinable
    func outcome(for input: PolicyInput) -> PolicyOutcome {
        entries[key(for: input) & mask]
    }

    /// The key of `input` in this table: its `tableKey` with the bits this table has.
    @inlinable
    func key(for input: PolicyInput) -> Int {
        input.tableKey | (input.isSlow ? slowBit : 0) | (input.anyRungCached ? anyRungBit : 0)
            | (input.coveringRungCached ? coveringRungBit : 0)
    }

    @inlinable
    func outcome(forKey key: Int) -> PolicyOutcome {
        entries[key & mask]
    }
}
