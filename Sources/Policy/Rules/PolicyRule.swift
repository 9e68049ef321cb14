/// One rule of a policy: a name, a condition, an action and the reason given to people when it
/// fires. Rules are tried in order; the first whose condition holds decides.
///
/// ## See Also
///
/// - <doc:WritingAPolicy>
public struct PolicyRule: Sendable, Hashable {
    /// A short unique name, reported with every decision (`cellular-thumbnail`).
    public var name: String
    /// When it applies.
    public var condition: RuleCondition
    /// What it decides.
    public var action: RuleAction
    /// Why, in one line, for people.
    public var reason: String

    /// Creates a rule.
    public init(_ name: String, when condition: RuleCondition = .always, then action: RuleAction, reason: String) {
        self.name = name
        self.condition = condition
        self.action = action
        self.reason = reason
    }
}
