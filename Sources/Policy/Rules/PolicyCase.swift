/// One line of a policy's table of expected results: the inputs, and what the policy must decide
/// for them, prefetch in their network state, or do with running loads when the network gets
/// worse to it. A case expects at least one of the three.
///
/// ```swift
/// PolicyCase(network: NetworkState(.cellular, isExpensive: true), expect: .load(.thumbnail),
///            prefetch: PrefetchPlan(ahead: 5, variants: .thumbnails), runningLoads: .cancel)
/// ```
public struct PolicyCase: Sendable, Hashable {
    /// An optional label, shown when the case fails.
    public var name: String?
    /// The network state.
    public var network: NetworkState
    /// Settings for this case; a declared setting left out takes its default.
    public var settings: [String: Bool] {
        get { settingValues.dictionary }
        set { settingValues = [SettingRequirement](sortedFrom: newValue) }
    }
    /// The same settings, sorted by key (a file's cases are read into this, with no dictionary:
    /// docs/startup.md).
    var settingValues: [SettingRequirement] = []
    /// What is cached (read by decisions only).
    public var cached: CachedVariants
    /// Whether the item has a thumbnail (read by decisions only).
    public var hasThumbnail: Bool
    /// Whether the thumbnail covers the display (counts only with a thumbnail).
    public var thumbnailCoversDisplay: Bool
    /// The measured link (`"throughput"` in a file), nil for an unmeasured one (read by decisions only).
    public var estimate: LinkEstimate?
    /// The expected action; nil to not check the decision.
    public var expectedAction: RuleAction?
    /// The rule expected to fire; nil to not check it.
    public var expectedRule: String?
    /// The expected prefetch plan in this network state; nil to not check it.
    public var expectedPrefetch: PrefetchPlan?
    /// What is expected of running loads when the network gets worse to this state; nil to not check it.
    public var expectedRunningLoads: RunningLoads?
    /// Whether a stale cached image is expected to be revalidated in this network state
    /// (`"revalidatesStale"` in a file); nil to not check it.
    public var expectedStaleRevalidation: Bool?
    /// The 1-based line of the case in its file, 0 when built in code.
    public var line: Int
    /// For a case about a rung rule: the item's ladder, the display and the cached rungs, and the
    /// rung expected; nil for a case about variants.
    public var ladder: Ladder?

    /// A case's item given as a ladder (`"ladder"`, `"displayWidth"`, `"cachedWidths"` and
    /// `"expect": {"rungWidth"}` in a file): the case is decided in full, rung included.
    public struct Ladder: Sendable, Hashable {
        /// The rung a case expects.
        public enum ExpectedRung: Sendable, Hashable {
            /// Not checked.
            case notChecked
            /// The placeholder (no rung).
            case placeholder
            /// The rung of this width, loaded or shown.
            case width(Int)
        }

        /// The item's widths (their URLs are made up, never fetched).
        public var ladder: ImageLadder
        /// The display width; nil for unknown.
        public var displayWidth: Int?
        /// The widths that are cached.
        public var cachedWidths: [Int]
        /// The kind of action expected; nil to not check it.
        public var expectedAction: ActionKind?
        /// The rung expected.
        public var expectedRung: ExpectedRung

        /// Creates a case's ladder.
        public init(ladder: ImageLadder, displayWidth: Int? = nil, cachedWidths: [Int] = [], expectedAction: ActionKind? = nil,
                    expectedRung: ExpectedRung = .notChecked) {
            self.ladder = ladder
            self.displayWidth = displayWidth
            self.cachedWidths = cachedWidths
            self.expectedAction = expectedAction
            self.expectedRung = expectedRung
        }

        /// The item the case decides: its widest rung the original, its narrowest the thumbnail.
        public var item: ImageItem { ImageItem(ladder: ladder) }

        /// The cached rungs, as bits over the item's rungs.
        public var cachedRungs: CachedRungs {
            let urls = ladder.rungs.filter { cachedWidths.contains($0.width) }.map(\.url)
            return CachedRungs(of: item, in: StaticCacheContents(urls: Set(urls)))
        }

        /// The cached variants the same cache holds: the original when the widest rung is cached,
        /// the thumbnail when the narrowest (of two or more) is.
        public var cachedVariants: CachedVariants {
            var variants: CachedVariants = []
            if cachedWidths.contains(ladder.widest.width) { variants.insert(.original) }
            if ladder.rungs.count > 1, cachedWidths.contains(ladder.narrowest.width) { variants.insert(.thumbnail) }
            return variants
        }
    }

    /// Creates a case.
    public init(name: String? = nil, network: NetworkState, settings: [String: Bool] = [:], cached: CachedVariants = [],
                hasThumbnail: Bool = true, thumbnailCoversDisplay: Bool = false, estimate: LinkEstimate? = nil, expect action: RuleAction? = nil,
                rule: String? = nil, prefetch: PrefetchPlan? = nil, runningLoads: RunningLoads? = nil, line: Int = 0) {
        self.name = name
        self.network = network
        self.cached = cached
        self.hasThumbnail = hasThumbnail
        self.thumbnailCoversDisplay = thumbnailCoversDisplay
        self.estimate = estimate
        self.expectedAction = action
        self.expectedRule = rule
        self.expectedPrefetch = prefetch
        self.expectedRunningLoads = runningLoads
        self.line = line
        if !settings.isEmpty { self.settings = settings }
    }

    /// Whether the case checks the decision (an action or a rule is expected).
    public var checksDecision: Bool { expectedAction != nil || expectedRule != nil || ladder != nil }
}
