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
    /// For a rule that chooses a rung of the item's ladder: how (docs/ladders.md); nil for a rule
    /// that loads or shows its `variant`.
    public var rung: RungSelection?

    /// Creates a rule.
    public init(_ name: String, when condition: RuleCondition = .always, then action: RuleAction, reason: String) {
        self.name = name
        self.condition = condition
        self.action = action
        self.reason = reason
    }

    /// Creates a rule that chooses a rung: `.load(choice)` loads the rung `choice` picks,
    /// `.showCached(choice)` shows a cached rung.
    public init(_ name: String, when condition: RuleCondition = .always, choosing rung: RungSelection, reason: String) {
        switch rung {
        case .load: self.init(name, when: condition, then: .load(.original), reason: reason)
        case .showCached: self.init(name, when: condition, then: .showCached(.original), reason: reason)
        }
        self.rung = rung
    }

    /// The action in words: `load thumbnail`, or for a rung rule `load the rung covering 1.0× the display`.
    public var actionDescription: String { rung.map(\.description) ?? action.description }
}
