/// One line of a policy's table of expected decisions: the inputs, and what the policy must
/// decide for them.
public struct PolicyCase: Sendable, Hashable {
    /// An optional label, shown when the case fails.
    public var name: String?
    /// The network state.
    public var network: NetworkState
    /// Settings for this case; a declared setting left out takes its default.
    public var settings: [String: Bool]
    /// What is cached.
    public var cached: CachedVariants
    /// Whether the item has a thumbnail.
    public var hasThumbnail: Bool
    /// Whether the thumbnail covers the display (counts only with a thumbnail).
    public var thumbnailCoversDisplay: Bool
    /// The expected action.
    public var expectedAction: RuleAction
    /// The rule expected to fire; nil to not check it.
    public var expectedRule: String?
    /// The 1-based line of the case in its file, 0 when built in code.
    public var line: Int

    /// Creates a case.
    public init(name: String? = nil, network: NetworkState, settings: [String: Bool] = [:], cached: CachedVariants = [],
                hasThumbnail: Bool = true, thumbnailCoversDisplay: Bool = false, expect action: RuleAction,
                rule: String? = nil, line: Int = 0) {
        self.name = name
        self.network = network
        self.settings = settings
        self.cached = cached
        self.hasThumbnail = hasThumbnail
        self.thumbnailCoversDisplay = thumbnailCoversDisplay
        self.expectedAction = action
        self.expectedRule = rule
        self.line = line
    }
}
