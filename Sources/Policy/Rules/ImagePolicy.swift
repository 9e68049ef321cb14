import Support
/// A decision policy: the boolean settings it reads, an ordered list of rules (first match wins,
/// the last one a catch-all), and a table of cases it must satisfy.
///
/// A policy is validated and compiled when it is made: every possible input is decided once, up
/// front, into a lookup table, so a decision costs a table read, not a walk over the rules.
///
/// ```swift
/// let policy = try ImagePolicy.load(contentsOf: "policies/low-data.json")
/// let decision = try policy.decide(item, network: reachability.currentState,
///                                  settings: store, cache: cache)
/// ```
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
/// - <doc:WritingAPolicy>
public struct ImagePolicy: Sendable {
    /// The most boolean settings one policy may read (the table doubles with each).
    public static let maximumSettings = 8
    /// The most rules one policy may have.
    public static let maximumRules = 255

    /// The policy's name (`default`, `low-data`): its file name without `.json`.
    public let name: String
    /// What the policy is for, in a sentence.
    public let summary: String
    /// The settings it reads, in bit order.
    public let settings: [SettingDeclaration]
    /// The rules, in order.
    public let rules: [PolicyRule]
    /// Its table of expected results (decisions, prefetch plans, running-loads choices).
    public let cases: [PolicyCase]
    /// The `prefetch` section: tried in order, the first entry whose condition holds for the
    /// network state and settings gives the plan; none matching means nothing is prefetched.
    public let prefetch: [PrefetchRule]
    /// The `runningLoadsOnWorseNetwork` option: tried in order, the first entry whose condition
    /// holds for the state the network got worse to says whether running loads finish; none
    /// matching (or none at all) means they are cancelled.
    public let runningLoadsOnWorseNetwork: [RunningLoadsRule]
    /// The `slowBelow` threshold: set exactly when a rule tests `slow`.
    public let slowBelow: SlowLinkThreshold?
    /// The `revalidateStale` option: on which links stale cached images are revalidated; nil when
    /// the policy does not say (the app's `HTTPOptions` decide, by default as `.freeLink`).
    public let staleRevalidation: StaleRevalidation?
    /// The `retryOnCostlyLink` option: which retries of a failed download are made on a link
    /// that costs (not `NetworkState.isFreeLink`); nil when the policy does not say (the app's
    /// `HTTPOptions` decide, by default `RetryScope.costlyLinkDefault`).
    public let costlyLinkRetries: RetryScope?
    /// The compiled lookup table.
    @usableFromInline let table: DecisionTable
    /// The compiled prefetch plans and running-loads choices.
    let networkStateTable: PrefetchTable

    /// Validates and compiles a policy.
    ///
    /// - Parameters:
    ///   - name: the policy's name (`default`, `low-data`).
    ///   - summary: what the policy is for, in a sentence.
    ///   - settings: the boolean settings the rules read, with their defaults (at most
    ///     ``maximumSettings``).
    ///   - rules: the rules, in order; the first that holds decides, and the last has no condition
    ///     (at most ``maximumRules``).
    ///   - cases: the policy's own table of expected decisions, checked here.
    ///   - prefetch: the `prefetch` section (default: prefetch nothing).
    ///   - runningLoadsOnWorseNetwork: the running-loads option (default: cancel).
    ///   - slowBelow: the threshold under which a measured link is slow; required when a rule
    ///     tests `slow`, refused otherwise.
    ///   - staleRevalidation: the `revalidateStale` option (default nil: not said).
    ///   - costlyLinkRetries: the `retryOnCostlyLink` option (default nil: not said).
    ///   - source: the file name for error messages (`<built-in>` for code).
    ///   - ruleLines: the line of each rule in `source`, for error messages (empty for code).
    /// - Throws: `DataFileError` with code `.invalid` naming the rule, entry or case and what is wrong.
    public init(name: String, summary: String = "", settings: [SettingDeclaration], rules: [PolicyRule],
                cases: [PolicyCase] = [], prefetch: [PrefetchRule] = [], runningLoadsOnWorseNetwork: [RunningLoadsRule] = [],
                slowBelow: SlowLinkThreshold? = nil, staleRevalidation: StaleRevalidation? = nil,
                costlyLinkRetries: RetryScope? = nil,
                source: String = "<built-in>", ruleLines: [Int] = []) throws(DataFileError) {
        self.staleRevalidation = staleRevalidation
        self.costlyLinkRetries = costlyLinkRetries
        self.name = name
        self.summary = summary
        self.settings = settings
        self.rules = rules
        self.cases = cases
        self.prefetch = prefetch
        self.runningLoadsOnWorseNetwork = runningLoadsOnWorseNetwork
        self.slowBelow = slowBelow
        readsRungCache = rules.contains { $0.condition.anyRungCached != nil || $0.condition.coveringRungCached != nil }
        choosesRungs = rules.contains { $0.rung != nil }
        let validator = PolicyValidator(source: source, settings: settings, rules: rules, cases: cases, prefetch: prefetch,
                                        runningLoads: runningLoadsOnWorseNetwork, slowBelow: slowBelow, ruleLines: ruleLines)
        self.table = try validator.compile()
        self.networkStateTable = try validator.compileNetworkStatePlans()
        try validator.checkCases()
        try checkVariantCasesOfRungRules(source: source)
    }

    /// Whether a stale cached image is revalidated on `network`: as `staleRevalidation` says, or
    /// `StaleRevalidation.default` when the policy does not say.
    public func revalidatesStale(on network: NetworkState) -> Bool {
        (staleRevalidation ?? .default).allows(on: network)
    }

    /// Which retries of a failed download are made on `network`: every one the transport allows
    /// on a free link; on a link that costs, as `costlyLinkRetries` says, or
    /// `RetryScope.costlyLinkDefault` when the policy does not say.
    public func retries(on network: NetworkState) -> RetryScope {
        network.isFreeLink ? .asConfigured : costlyLinkRetries ?? .costlyLinkDefault
    }

    /// The position of the setting `key` among `settings`, or nil when the policy does not read it.
    public func settingPosition(_ key: String) -> Int? {
        settings.firstIndex { $0.key == key }
    }

    /// The declared defaults, as resolved settings.
    public var defaultSettings: ResolvedSettings {
        var bits: UInt16 = 0
        for (position, declaration) in settings.enumerated() where declaration.defaultValue { bits |= 1 << position }
        return ResolvedSettings(bits: bits)
    }

    /// Resolves `values` (key → on/off) against the declarations; keys left out take their
    /// defaults. Returns the first key the policy does not declare through `unknownKey`.
    public func resolveSettings(_ values: [String: Bool]) -> (settings: ResolvedSettings, unknownKey: String?) {
        resolveSettings([SettingRequirement](sortedFrom: values))
    }

    /// `resolveSettings(_:)` for values already sorted by key.
    func resolveSettings(_ values: [SettingRequirement]) -> (settings: ResolvedSettings, unknownKey: String?) {
        var resolved = defaultSettings
        var unknown: String?
        for value in values {
            guard let position = settingPosition(value.key) else {
                if unknown == nil { unknown = value.key }
                continue
            }
            resolved.set(at: position, to: value.wanted)
        }
        return (resolved, unknown)
    }

    /// Reads every setting the policy declares from `store` (its stored value, else the policy's
    /// default).
    ///
    /// - Throws: `DataFileError` with code `.wrongType` when the store holds a value of another
    ///   type under one of the keys, or the store's own read error.
    public func resolveSettings(from store: some SettingsStore) throws(DataFileError) -> ResolvedSettings {
        var bits: UInt16 = 0
        for (position, declaration) in settings.enumerated() {
            let value = try store.bool(forKey: declaration.key) ?? declaration.defaultValue
            if value { bits |= 1 << position }
        }
        return ResolvedSettings(bits: bits)
    }

    /// The rule that fires for `input`, with its action: the compiled fast path, a table read.
    @inlinable @inline(__always)
    public func outcome(for input: PolicyInput) -> PolicyOutcome {
        table.outcome(for: input)
    }

    /// Decides what to do for `item`. `displayWidth` is the slot's width in pixels (read by rung
    /// rules and `thumbnailCoversDisplay`); `estimate` is the measured link (nil until measured),
    /// read by policies that test `slow` or choose a rung `within` a time.
    public func decide(_ item: ImageItem, network: NetworkState, settings: ResolvedSettings,
                       cache: some CacheInspecting, displayWidth: Int? = nil, estimate: LinkEstimate? = nil) -> Decision {
        decide(item, network: network, settings: settings, cached: cache.cachedVariants(of: item),
               cachedRungs: cachedRungs(of: item, in: cache), displayWidth: displayWidth, estimate: estimate)
    }

    /// What `cache` holds of `item`'s rungs, asked only when this policy reads them (a rule tests
    /// a cached rung or chooses one) or the item has a ladder (one question per rung); nil
    /// otherwise (the decision then reads the rungs from the cached original and thumbnail).
    public func cachedRungs(of item: ImageItem, in cache: some CacheInspecting) -> CachedRungs? {
        readsRungCache || choosesRungs || item.ladder != nil ? cache.cachedRungs(of: item) : nil
    }

    /// Decides what to do for `item`, reading the policy's settings from `store`.
    public func decide(_ item: ImageItem, network: NetworkState, settings store: some SettingsStore,
                       cache: some CacheInspecting, displayWidth: Int? = nil, estimate: LinkEstimate? = nil) throws(DataFileError) -> Decision {
        decide(item, network: network, settings: try resolveSettings(from: store), cache: cache, displayWidth: displayWidth,
               estimate: estimate)
    }

    /// Decides what to do for `item` given what is cached of it.
    /// `displayWidth` is the width in pixels of the slot the image is shown in (points × scale),
    /// when known: with the item's widths it tells whether the thumbnail covers the display.
    /// `estimate` is the measured link (nil until measured): below the policy's `slowBelow` it is
    /// slow, for the rules that test `slow`.
    ///
    /// ```swift
    /// let slowWifi = LinkEstimate(bytesPerSecond: 30_000)
    /// policy.decide(item, network: NetworkState(.wifi), settings: settings, cached: [], estimate: slowWifi)
    /// ```
    ///
    /// `cachedRungs` says which rungs of the item's ladder are cached (`CachedRungs(of:in:)`);
    /// nil reads them from `cached` (the original's and the thumbnail's rungs). A rule that
    /// chooses a rung (docs/ladders.md) decides with them and `displayWidth`.
    public func decide(_ item: ImageItem, network: NetworkState, settings: ResolvedSettings,
                       cached: CachedVariants, cachedRungs: CachedRungs? = nil, displayWidth: Int? = nil,
                       estimate: LinkEstimate? = nil) -> Decision {
        // The rungs matter only to a policy that reads or chooses them, or for an item with a
        // ladder: any other decision (the article's tree) stays a table read.
        let needsRungs = readsRungCache || choosesRungs || item.ladder != nil
        let cachedRungs = needsRungs ? cachedRungs ?? CachedRungs(of: item, cachedVariants: cached) : CachedRungs.none
        let input = input(for: item, network: network, settings: settings, cached: cached, cachedRungs: cachedRungs,
                          displayWidth: displayWidth, estimate: estimate)
        let outcome = outcome(for: input)
        let rule = rules[outcome.ruleIndex]
        if let rung = rule.rung {
            let decision = decide(item, choosing: rung, rule: rule, cachedRungs: cachedRungs, displayWidth: displayWidth,
                                  estimate: estimate, network: network)
            return preferringCachedRungs(decision, of: item, cachedRungs: cachedRungs)
        }
        let action: Decision.Action
        // Validation guarantees that the variant exists for every input a rule can fire for.
        switch outcome.action {
        case .showCached(let variant):
            action = item.url(of: variant).map { .showCached(variant, $0) } ?? .placeholder
        case .load(let variant):
            action = item.url(of: variant).map { .load(variant, $0) } ?? .placeholder
        case .placeholder:
            action = .placeholder
        }
        let decision = Decision(action: action, rule: rule.name, reason: rule.reason, network: network)
        // An item without a ladder is decided exactly as the rules say (the article's tree).
        return item.ladder == nil ? decision : preferringCachedRungs(decision, of: item, cachedRungs: cachedRungs)
    }

    /// The facts a decision about `item` is made from (what `decide` looks up; `--explain` shows it).
    public func input(for item: ImageItem, network: NetworkState, settings: ResolvedSettings, cached: CachedVariants,
                      cachedRungs: CachedRungs? = nil, displayWidth: Int? = nil, estimate: LinkEstimate? = nil) -> PolicyInput {
        // Only a policy that tests cached rungs has their bits in its table; for any other they stay off.
        let cachedRungs = readsRungCache ? cachedRungs ?? CachedRungs(of: item, cachedVariants: cached) : CachedRungs.none
        let covering = cachedRungs.bits != 0
            && cachedRungs.coveringIndex(among: item.rungCandidates, displayWidth: displayWidth) != nil
        return PolicyInput(network: network, cached: cached, hasThumbnail: item.thumbnail != nil, settings: settings,
                           thumbnailCoversDisplay: item.thumbnailCovers(displayWidth: displayWidth), isSlow: isSlow(estimate),
                           anyRungCached: cachedRungs.bits != 0, coveringRungCached: covering)
    }

    /// Whether `estimate` is slow for this policy: below `slowBelow`; false when the policy has no
    /// threshold (no rule tests `slow`) or the link is not measured.
    public func isSlow(_ estimate: LinkEstimate?) -> Bool {
        slowBelow?.isSlow(estimate) ?? false
    }

    /// Whether a rule tests `slow`: the table then has a slow bit, and the truth table lists slow
    /// inputs apart.
    public var readsSlow: Bool { rules.contains { $0.condition.slow != nil } }

    /// Whether a rule tests `thumbnailCoversDisplay`: the truth table then lists those inputs apart.
    public var readsThumbnailCoversDisplay: Bool { rules.contains { $0.condition.thumbnailCoversDisplay != nil } }

    /// Whether a rule tests `"cached": {"any": …}` or `{"covering": …}`: decisions then ask the
    /// cache about each rung, and the truth table lists those inputs apart.
    public let readsRungCache: Bool

    /// Whether a rule chooses a rung of the item's ladder (set when the policy is made).
    public let choosesRungs: Bool

    /// Whether a rule tests `roaming`: the truth table then lists roaming inputs apart.
    public var readsRoaming: Bool { rules.contains { $0.condition.roaming != nil } }

    /// Whether a rule tests `captive`. When none does, a captive network is decided as offline.
    public var readsCaptive: Bool { rules.contains { $0.condition.captive != nil } }

    /// The rules tried for `input`, in order, up to and including the one that fired, each with
    /// why it did or did not match. This walks the rules (the slow path) for `--explain`. A captive
    /// network is tried as offline when no rule tests `captive`.
    public func explain(_ input: PolicyInput) -> [RuleTrace] {
        let input = input.network.isCaptive && !readsCaptive ? input.seenAsOffline : input
        var traces: [RuleTrace] = []
        for (index, rule) in rules.enumerated() {
            let mismatch = rule.condition.mismatch(for: input) { key in
                settingPosition(key).map { input.settings.isOn(at: $0) } ?? false
            }
            traces.append(RuleTrace(index: index, rule: rule, mismatch: mismatch))
            if mismatch == nil { break }
        }
        return traces
    }

    /// Every input the policy can tell apart (network kind × expensive × constrained × roaming,
    /// when a rule tests it × captive, when a rule tests it × cached variants × thumbnail present ×
    /// each setting × slow, when a rule tests it, for a network that is not offline × cached rungs
    /// (none, narrower, covering), when a rule tests them), with the outcome for each, in a stable
    /// order.
    public func truthTable() -> [(input: PolicyInput, outcome: PolicyOutcome)] {
        PolicyInput.all(settingCount: settings.count, roaming: readsRoaming, captive: readsCaptive, covers: readsThumbnailCoversDisplay,
                        slow: readsSlow, rungCache: readsRungCache)
            .map { ($0, outcome(for: $0)) }
    }
}

/// The result of the compiled fast path: which rule fired, and its action.
@frozen
public struct PolicyOutcome: Sendable, Hashable {
    /// The rule's action.
    public let action: RuleAction
    @usableFromInline let rawRuleIndex: UInt8

    /// The index of the rule in `ImagePolicy.rules`.
    @inlinable public var ruleIndex: Int { Int(rawRuleIndex) }

    init(ruleIndex: Int, action: RuleAction) {
        rawRuleIndex = UInt8(ruleIndex)
        self.action = action
    }
}

/// One step of `ImagePolicy.explain(_:)`.
public struct RuleTrace: Sendable, Hashable {
    /// The rule's index in the policy.
    public var index: Int
    /// The rule.
    public var rule: PolicyRule
    /// Nil when the rule matched; otherwise why not.
    public var mismatch: String?

    /// Whether the rule matched (and so fired).
    public var matched: Bool { mismatch == nil }
}

extension PolicyInput {
    /// Every feasible input for a policy with `settingCount` settings, with roaming and captive
    /// networks when asked (a policy that tests neither decides them as expensive and as offline),
    /// and slow links when asked. A cached thumbnail without a thumbnail URL cannot happen, nor
    /// roaming without expensive, nor a slow offline link: they are left out.
    static func all(settingCount: Int, roaming: Bool, captive: Bool, covers: Bool = false, slow: Bool = false,
                    rungCache: Bool = false) -> [PolicyInput] {
        let rungStates = rungCache ? [(false, false), (true, false), (true, true)] : [(false, false)]
        var inputs: [PolicyInput] = []
        for bits in 0..<(1 << settingCount) {
            for kind in NetworkKind.allCases {
                for (expensive, isRoaming) in roaming ? [(false, false), (true, false), (true, true)] : [(false, false), (true, false)] {
                    for constrained in [false, true] {
                        for isCaptive in captive ? [false, true] : [false] {
                            for hasThumbnail in [true, false] {
                                for raw in UInt8(0)...3 where hasThumbnail || raw & 2 == 0 {
                                    for thumbnailCovers in covers && hasThumbnail ? [false, true] : [false] {
                                        for isSlow in slow && kind != .offline ? [false, true] : [false] {
                                            for (anyRung, coveringRung) in rungStates {
                                                inputs.append(PolicyInput(
                                                    network: NetworkState(kind, isExpensive: expensive, isConstrained: constrained,
                                                                          isRoaming: isRoaming, isCaptive: isCaptive),
                                                    cached: CachedVariants(rawValue: raw), hasThumbnail: hasThumbnail,
                                                    settings: ResolvedSettings(bits: UInt16(bits)), thumbnailCoversDisplay: thumbnailCovers,
                                                    isSlow: isSlow, anyRungCached: anyRung, coveringRungCached: coveringRung))
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return inputs
    }
}
