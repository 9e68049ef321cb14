/// One entry of a policy's `prefetch` section: in the network states (and settings) its
/// condition matches, a list prefetches by its plan. Entries are tried in order and the first
/// that matches decides; when none matches, nothing is prefetched.
///
/// The condition may read only the network state and the policy's settings: a plan is made for
/// a whole list, not for one item, so conditions on the cache or on the item are refused.
///
/// ```swift
/// PrefetchRule(when: RuleCondition(networks: [.wifi, .wired], expensive: false, constrained: false),
///              plan: PrefetchPlan(ahead: 20, behind: 5, variants: .decided))
/// ```
public struct PrefetchRule: Sendable, Hashable {
    /// An optional label, used in messages and listings.
    public var name: String?
    /// The network states (and settings) it applies to.
    public var condition: RuleCondition
    /// What is prefetched there.
    public var plan: PrefetchPlan
    /// The 1-based line of the entry in its file, 0 when built in code.
    public var line: Int

    /// Creates an entry.
    public init(_ name: String? = nil, when condition: RuleCondition = .always, plan: PrefetchPlan, line: Int = 0) {
        self.name = name
        self.condition = condition
        self.plan = plan
        self.line = line
    }
}
