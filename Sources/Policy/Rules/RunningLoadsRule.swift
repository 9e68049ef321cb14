/// One entry of a policy's `runningLoadsOnWorseNetwork` option: in the network states (and
/// settings) its condition matches, loads that were running when the network got worse are
/// cancelled or let finish. Entries are tried in order; when none matches, they are cancelled.
///
/// The condition reads the state the network got worse *to*, and may read only the network state
/// and the policy's settings (as `PrefetchRule`).
///
/// ```swift
/// [RunningLoadsRule(when: RuleCondition(roaming: true), then: .cancel), RunningLoadsRule(then: .finish)]
/// ```
public struct RunningLoadsRule: Sendable, Hashable {
    /// The network states (and settings) it applies to.
    public var condition: RuleCondition
    /// What happens to running loads there.
    public var runningLoads: RunningLoads
    /// The 1-based line of the entry in its file, 0 when built in code.
    public var line: Int

    /// Creates an entry.
    public init(when condition: RuleCondition = .always, then runningLoads: RunningLoads, line: Int = 0) {
        self.condition = condition
        self.runningLoads = runningLoads
        self.line = line
    }
}
