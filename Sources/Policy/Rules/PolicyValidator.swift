import Support
/// Checks a policy and compiles it to a `DecisionTable`.
///
/// It rejects: too many rules or settings, duplicate names, a condition that reads a setting the
/// policy does not declare, a last rule that is not a catch-all, a rule that can never fire (its
/// condition never holds, or earlier rules always win), a rule that can fire for an input where
/// its action is impossible (showing a cached thumbnail that is not cached, loading a thumbnail
/// the item does not have, loading when its "network" names offline), and cases that name
/// unknown settings or rules. Every message names the rule by its 1-based index and name. The `prefetch` section and the running-loads option
/// are checked and compiled by `compileNetworkStatePlans()` (PolicyValidator+Prefetch.swift), the
/// cases last by `checkCases()`.
struct PolicyValidator {
    let source: String
    let settings: [SettingDeclaration]
    let rules: [PolicyRule]
    let cases: [PolicyCase]
    var prefetch: [PrefetchRule] = []
    var runningLoads: [RunningLoadsRule] = []
    var slowBelow: SlowLinkThreshold?
    let ruleLines: [Int]

    private func fail(_ message: String, rule index: Int? = nil) -> DataFileError {
        guard let index else { return DataFileError(.invalid, source: source, message: message) }
        let line = index < ruleLines.count ? ruleLines[index] : nil
        return DataFileError(.invalid, source: source, line: line, context: "rule \(index + 1) (\"\(rules[index].name)\")",
                             message: message)
    }

    func compile() throws(DataFileError) -> DecisionTable {
        guard !rules.isEmpty else { throw fail("the policy has no rule") }
        guard rules.count <= ImagePolicy.maximumRules else {
            throw fail("\(rules.count) rules, at most \(ImagePolicy.maximumRules) are allowed")
        }
        guard settings.count <= ImagePolicy.maximumSettings else {
            throw fail("\(settings.count) settings, at most \(ImagePolicy.maximumSettings) are allowed")
        }
        var declared = SortedNames()
        for declaration in settings {
            guard !declaration.key.isEmpty else { throw fail("a setting has an empty name") }
            guard declared.insert(declaration.key) else { throw fail("the setting \"\(declaration.key)\" is declared twice") }
        }
        var names = SortedNames()
        for (index, rule) in rules.enumerated() {
            guard !rule.name.isEmpty else { throw fail("the rule has an empty name", rule: index) }
            guard names.insert(rule.name) else { throw fail("another rule already has this name", rule: index) }
            if rule.reason.isEmpty { throw fail("the rule has no reason", rule: index) }
            if rule.condition.networkBits == 0 {
                throw fail("\"network\" lists no network kind, so the rule can never fire", rule: index)
            }
            for key in rule.condition.settingRequirements.map(\.key) where !declared.contains(key) {
                throw fail("reads the setting \"\(key)\", which the policy does not declare in \"settings\"", rule: index)
            }
        }
        guard rules[rules.count - 1].condition.isCatchAll else {
            throw fail("the last rule must be a catch-all (no \"when\"), so that every input gets a decision",
                       rule: rules.count - 1)
        }
        let readsSlow = rules.contains { $0.condition.slow != nil }
        try checkSlowBelow(readsSlow: readsSlow)

        // Decide every input the policy can tell apart by walking the rules once; this is the table.
        let readsRoaming = rules.contains { $0.condition.roaming != nil }
        let readsCaptive = rules.contains { $0.condition.captive != nil }
        let readsCovers = rules.contains { $0.condition.thumbnailCoversDisplay != nil }
        let readsRungCache = rules.contains { $0.condition.anyRungCached != nil || $0.condition.coveringRungCached != nil }
        try checkRungs()
        let inputs = PolicyInput.all(settingCount: settings.count, roaming: readsRoaming, captive: readsCaptive, covers: readsCovers,
                                     slow: readsSlow, rungCache: readsRungCache)
        // A policy that tests `slow` has one more key bit, above the settings: twice the entries;
        // one that tests cached rungs two more above that: four times.
        let aboveSettings = (1 << TableKey.settingsShift) << settings.count
        let slowBit = readsSlow ? aboveSettings : 0
        let aboveSlow = aboveSettings << (readsSlow ? 1 : 0)
        let anyRungBit = readsRungCache ? aboveSlow : 0, coveringRungBit = readsRungCache ? aboveSlow << 1 : 0
        let keyCount = aboveSlow << (readsRungCache ? 2 : 0)
        let key = { (input: PolicyInput) in
            input.tableKey | (input.isSlow ? slowBit : 0) | (input.anyRungCached ? anyRungBit : 0)
                | (input.coveringRungCached ? coveringRungBit : 0)
        }
        let matchers = rules.map { ConditionMatcher($0.condition, settings: settings) }
        var entries = ContiguousArray(repeating: PolicyOutcome(ruleIndex: rules.count - 1, action: rules[rules.count - 1].action),
                                      count: keyCount)
        var fired = Array(repeating: 0, count: rules.count)
        // By rule index (an array: a dictionary of a new type costs a conformance search at run time).
        var firstImpossible = [PolicyInput?](repeating: nil, count: rules.count)
        for input in inputs {
            let index = matchers.firstIndex { $0.holds(for: input) } ?? rules.count - 1
            fired[index] += 1
            if firstImpossible[index] == nil, !isPossible(rules[index], for: input) {
                firstImpossible[index] = input
            }
            entries[key(input)] = PolicyOutcome(ruleIndex: index, action: rules[index].action)
        }
        // Every other key takes the entry of the input it stands for, so that none is left
        // undecided: a cached thumbnail without a thumbnail URL as not cached; roaming, when no
        // rule tests it, as expensive; captive, when no rule tests it, as offline; a thumbnail that
        // covers the display, when no rule tests it (or there is no thumbnail), as one that does not;
        // a slow offline link as one that is not slow.
        for key in 0..<keyCount {
            var canonical = key
            if canonical & TableKey.hasThumbnail == 0 { canonical &= ~(TableKey.thumbnailCached | TableKey.thumbnailCoversDisplay) }
            if !readsCovers { canonical &= ~TableKey.thumbnailCoversDisplay }
            if canonical & TableKey.roaming != 0 { canonical |= TableKey.expensive }
            if !readsRoaming { canonical &= ~TableKey.roaming }
            if !readsCaptive, canonical & TableKey.captive != 0 {
                canonical = (canonical & ~TableKey.captive & ~TableKey.kindMask) | NetworkKind.offline.index
            }
            if canonical & TableKey.kindMask == NetworkKind.offline.index { canonical &= ~slowBit }
            if canonical & coveringRungBit != 0 { canonical |= anyRungBit }
            if canonical != key { entries[key] = entries[canonical] }
        }
        for (index, count) in fired.enumerated() where count == 0 {
            let neverHolds = !inputs.contains { matchers[index].holds(for: $0) }
            throw fail(neverHolds ? "the condition can never hold, so the rule can never fire"
                                  : "the rule can never fire: earlier rules match every input it matches", rule: index)
        }
        for (index, input) in firstImpossible.enumerated() {
            guard let input else { continue }
            let action = rules[index].action
            let why: String, remedy: String
            switch (action, rules[index].rung) {
            case (_, .showCached(let choice)?):
                why = "shows the \(choice == .covering ? "cached rung covering the display" : "widest cached rung") but can fire when "
                    + (choice == .covering ? "no cached rung covers it" : "no rung is cached")
                remedy = "add \"cached\": {\"\(choice == .covering ? "covering" : "any")\": true} to its \"when\""
            case (.showCached(let variant), nil):
                why = "shows the cached \(variant) but can fire when it is not cached"
                remedy = "add a condition on \"cached\" or \"hasThumbnail\""
            case (.load, _) where input.network.kind == .offline:
                why = "loads \(rules[index].rung == nil ? "the \(action.variant.map { "\($0)" } ?? "")" : "a rung") but can fire offline, where nothing can be loaded"
                remedy = "remove offline from its \"network\""
            default:
                why = "loads the thumbnail but can fire for an item without one"
                remedy = "add a condition on \"cached\" or \"hasThumbnail\""
            }
            throw fail("\(why) (for example \(describe(input))); \(remedy)", rule: index)
        }
        return DecisionTable(entries: entries, slowBit: slowBit, anyRungBit: anyRungBit, coveringRungBit: coveringRungBit)
    }

    /// A rung rule's choice is usable, and its action is the one its rung part is for.
    private func checkRungs() throws(DataFileError) {
        for (index, rule) in rules.enumerated() {
            switch (rule.rung, rule.action) {
            case (nil, _): continue
            case (.load(let choice)?, .load):
                if let problem = choice.problem { throw fail("\"rung\": \(problem)", rule: index) }
            case (.showCached?, .showCached): continue
            default:
                throw fail("a \"rung\" goes with the action \"load\" (a choice) or \"show-cached\" (\"covering\" or \"widest\"), "
                           + "not \"\(rule.action.kind)\"", rule: index)
            }
        }
    }

    /// A policy that tests `slow` gives its threshold, and only such a policy does.
    private func checkSlowBelow(readsSlow: Bool) throws(DataFileError) {
        if let slowBelow {
            guard readsSlow else {
                throw fail("\"slowBelow\" is given, but no rule tests \"slow\": add a rule with \"when\": {\"slow\": true} or remove it")
            }
            guard (1...SlowLinkThreshold.maximumBytesPerSecond).contains(slowBelow.bytesPerSecond) else {
                throw fail("\"slowBelow\" is \(slowBelow.bytesPerSecond) bytes per second: it must be from 1 to "
                           + "\(SlowLinkThreshold.maximumBytesPerSecond)")
            }
        } else if let index = rules.firstIndex(where: { $0.condition.slow != nil }) {
            throw fail("tests \"slow\", but the policy gives no threshold: add \"slowBelow\": {\"bytesPerSecond\": 51200}", rule: index)
        }
    }

    /// Checks the cases against the policy (run after `compile()` and `compileNetworkStatePlans()`).
    func checkCases() throws(DataFileError) {
        let names = SortedNames(rules.map(\.name))
        let declared = SortedNames(settings.map(\.key))
        for (position, policyCase) in cases.enumerated() {
            let context = "case \(position + 1)"
            guard policyCase.checksDecision || policyCase.expectedPrefetch != nil || policyCase.expectedRunningLoads != nil
                    || policyCase.expectedStaleRevalidation != nil else {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "expects nothing: give an action, a prefetch plan or a running-loads choice (or revalidatesStale)")
            }
            if !policyCase.checksDecision, !policyCase.cached.isEmpty || !policyCase.hasThumbnail || policyCase.thumbnailCoversDisplay {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "describes the item or its cache, which only decisions read, but expects no action")
            }
            if let plan = policyCase.expectedPrefetch, let problem = Self.problem(with: plan) {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context, message: "expects a prefetch plan that \(problem)")
            }
            for key in policyCase.settingValues.map(\.key) where !declared.contains(key) {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "sets \"\(key)\", which the policy does not declare in \"settings\"")
            }
            if let rule = policyCase.expectedRule, !names.contains(rule) {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "expects the rule \"\(rule)\", which the policy does not have")
            }
            if policyCase.estimate != nil, slowBelow == nil, !readsThroughputInRungs {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "gives a \"throughput\", but no rule tests \"slow\" or chooses a rung \"within\" a time")
            }
            if policyCase.estimate != nil, !policyCase.checksDecision {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "gives a \"throughput\", which only decisions read, but expects no action")
            }
            if policyCase.cached.has(.thumbnail), !policyCase.hasThumbnail {
                throw DataFileError(.invalid, source: source, line: policyCase.line, context: context,
                                    message: "says the thumbnail is cached but the item has none")
            }
        }
    }

    /// Whether a rule chooses a rung that arrives within a time (it reads the measured rate).
    private var readsThroughputInRungs: Bool {
        rules.contains { rule in
            if case .load(let choice)? = rule.rung { return choice.within != nil }
            return false
        }
    }

    private func isPossible(_ rule: PolicyRule, for input: PolicyInput) -> Bool {
        switch rule.rung {
        case .showCached(.covering)?: return input.coveringRungCached
        case .showCached(.widest)?: return input.anyRungCached
        case .load?, nil: break
        }
        switch rule.action {
        case .showCached(let variant): return input.cached.has(variant) && (variant == .original || input.hasThumbnail)
        // Offline, nothing can be loaded: a rule whose "network" names offline and that loads
        // was written for a load that can never run. (A rule without a "network" condition, a
        // catch-all, may still load: offline its load fails as "offline and not cached".)
        case .load where input.network.kind == .offline && rule.condition.networkBits.map({ $0 & NetworkKind.offline.bit != 0 }) == true:
            return false
        case .load(.thumbnail): return input.hasThumbnail
        case .load(.original), .placeholder: return true
        }
    }

    private func describe(_ input: PolicyInput) -> String {
        var text = input.description
        for (position, declaration) in settings.enumerated() {
            text += " \(declaration.key)=\(input.settings.isOn(at: position) ? "on" : "off")"
        }
        return text
    }
}
