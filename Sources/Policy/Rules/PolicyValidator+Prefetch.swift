import Support
extension PolicyValidator {
    /// The most entries the `prefetch` section, or the running-loads option, may have.
    static let maximumEntries = 255

    /// Checks the `prefetch` section and the running-loads option and compiles both to a table.
    ///
    /// It rejects: too many entries, a condition on the cache or the item (a plan is for a whole
    /// list), a `network` list with no kind, a setting the policy does not declare, a negative or
    /// absurd row count, two prefetch entries with one name, and an entry that can never apply
    /// (its condition never holds, or earlier entries match every state it matches). Entries that
    /// test no `captive` see a captive network as offline, as rules do.
    func compileNetworkStatePlans() throws(DataFileError) -> PrefetchTable {
        let declared = SortedNames(settings.map(\.key))
        var names = SortedNames()
        for (index, entry) in prefetch.enumerated() {
            let context = prefetchContext(index)
            try checkStateCondition(entry.condition, declared: declared, line: entry.line, context: context, what: "a prefetch plan")
            if let problem = Self.problem(with: entry.plan) {
                throw DataFileError(.invalid, source: source, line: entry.line, context: context, message: problem)
            }
            if let name = entry.name {
                guard !name.isEmpty else { throw DataFileError(.invalid, source: source, line: entry.line, context: context, message: "the name is empty") }
                guard names.insert(name) else {
                    throw DataFileError(.invalid, source: source, line: entry.line, context: context, message: "another prefetch entry already has this name")
                }
            }
        }
        for (index, entry) in runningLoads.enumerated() {
            try checkStateCondition(entry.condition, declared: declared, line: entry.line, context: runningLoadsContext(index),
                                    what: "the running-loads choice")
        }
        if prefetch.count > Self.maximumEntries {
            throw DataFileError(.invalid, source: source, context: "prefetch",
                                message: "\(prefetch.count) entries, at most \(Self.maximumEntries) are allowed")
        }
        if runningLoads.count > Self.maximumEntries {
            throw DataFileError(.invalid, source: source, context: "runningLoadsOnWorseNetwork",
                                message: "\(runningLoads.count) entries, at most \(Self.maximumEntries) are allowed")
        }

        let prefetchConditions = prefetch.map { ConditionMatcher($0.condition, settings: settings) }
        let runningConditions = runningLoads.map { ConditionMatcher($0.condition, settings: settings) }
        let prefetchReadsCaptive = prefetch.contains { $0.condition.captive != nil }
        let runningReadsCaptive = runningLoads.contains { $0.condition.captive != nil }
        let keyCount = PrefetchTable.keyCount(settingCount: settings.count)
        var entries = ContiguousArray(repeating: PrefetchTable.Entry(), count: keyCount)
        var prefetchApplied = Array(repeating: false, count: prefetch.count)
        var runningApplied = Array(repeating: false, count: runningLoads.count)
        var prefetchHolds = prefetchApplied, runningHolds = runningApplied
        for key in 0..<keyCount {
            guard let (network, settings) = PrefetchTable.state(forKey: key) else { continue }
            var entry = PrefetchTable.Entry()
            let seenByPrefetch = prefetchReadsCaptive ? network : network.seenAsOfflineWhenCaptive
            if let index = firstMatch(prefetchConditions, seenByPrefetch, settings, holds: &prefetchHolds) {
                prefetchApplied[index] = true
                entry.plan = prefetch[index].plan
                entry.prefetchEntry = Int16(index)
            }
            let seenByRunning = runningReadsCaptive ? network : network.seenAsOfflineWhenCaptive
            if let index = firstMatch(runningConditions, seenByRunning, settings, holds: &runningHolds) {
                runningApplied[index] = true
                entry.runningLoads = runningLoads[index].runningLoads
                entry.runningLoadsEntry = Int16(index)
            }
            entries[key] = entry
        }
        for (index, applied) in prefetchApplied.enumerated() where !applied {
            throw DataFileError(.invalid, source: source, line: prefetch[index].line, context: prefetchContext(index),
                                message: Self.neverApplies(holds: prefetchHolds[index]))
        }
        for (index, applied) in runningApplied.enumerated() where !applied {
            throw DataFileError(.invalid, source: source, line: runningLoads[index].line, context: runningLoadsContext(index),
                                message: Self.neverApplies(holds: runningHolds[index]))
        }
        // Keys no state has (kind indexes past the last kind, roaming without expensive) take the
        // entry of the state they stand for, so that a lookup never lands on an undecided entry.
        for key in 0..<keyCount where PrefetchTable.state(forKey: key) == nil {
            let canonical = key & TableKey.kindMask < NetworkKind.allCases.count ? key | TableKey.expensive
                                                                                  : (key & ~TableKey.kindMask) | NetworkKind.offline.index
            entries[key] = entries[canonical]
        }
        return PrefetchTable(entries: entries)
    }

    /// What is wrong with `plan`, or nil when it is fine.
    static func problem(with plan: PrefetchPlan) -> String? {
        for (key, count) in [("ahead", plan.ahead), ("behind", plan.behind)] {
            if count < 0 { return "\"\(key)\" is \(count): a row count cannot be negative" }
            if count > PrefetchPlan.maximumRows { return "\"\(key)\" is \(count) rows, at most \(PrefetchPlan.maximumRows) are allowed" }
        }
        return nil
    }

    private static func neverApplies(holds: Bool) -> String {
        holds ? "the entry can never apply: earlier entries match every network state it matches"
              : "the condition can never hold, so the entry can never apply"
    }

    private func prefetchContext(_ index: Int) -> String {
        "prefetch entry \(index + 1)" + (prefetch[index].name.map { " (\"\($0)\")" } ?? "")
    }

    private func runningLoadsContext(_ index: Int) -> String {
        "runningLoadsOnWorseNetwork entry \(index + 1)"
    }

    private func checkStateCondition(_ condition: RuleCondition, declared: SortedNames, line: Int, context: String,
                                     what: String) throws(DataFileError) {
        func fail(_ message: String) -> DataFileError {
            DataFileError(.invalid, source: source, line: line, context: context, message: message)
        }
        if condition.slow != nil { throw fail(Self.slowInStateCondition(what)) }
        let itemKeys = [("cached", condition.cachedMask != 0), ("hasThumbnail", condition.hasThumbnail != nil),
                        ("thumbnailCoversDisplay", condition.thumbnailCoversDisplay != nil)]
        if let (key, _) = itemKeys.first(where: { $0.1 }) {
            throw fail("\"when\" tests \"\(key)\", which is about one item, but \(what) is for a whole list "
                       + "(it may test \(quotedList(Self.stateConditionKeys)))")
        }
        if condition.networkBits == 0 {
            throw fail("\"network\" lists no network kind, so the entry can never apply")
        }
        for key in condition.settingRequirements.map(\.key) where !declared.contains(key) {
            throw fail("reads the setting \"\(key)\", which the policy does not declare in \"settings\"")
        }
    }

    /// Why `slow` is refused in a prefetch or running-loads `when`.
    static func slowInStateCondition(_ what: String) -> String {
        "\"when\" tests \"slow\", which only decisions read (a measured link is not part of the network state), "
            + "but \(what) is chosen from the network state (it may test \(quotedList(stateConditionKeys)))"
    }

    /// The keys a `when` of a prefetch or running-loads entry may have.
    static let stateConditionKeys = ["network", "expensive", "constrained", "roaming", "captive", "settings"]

    /// The first of `conditions` that holds for `network` and `settings`; marks each that holds in `holds`.
    private func firstMatch(_ conditions: [ConditionMatcher], _ network: NetworkState, _ settings: ResolvedSettings,
                            holds: inout [Bool]) -> Int? {
        let input = PolicyInput(network: network, cached: [], hasThumbnail: true, settings: settings)
        var first: Int?
        for (index, condition) in conditions.enumerated() {
            let matched = condition.holds(for: input)
            if matched {
                holds[index] = true
                if first == nil { first = index }
            }
        }
        return first
    }
}

extension NetworkState {
    /// The state as a list of entries none of which tests `captive` sees it: a captive network as offline.
    var seenAsOfflineWhenCaptive: NetworkState {
        guard isCaptive else { return self }
        var state = self
        state.kind = .offline
        state.isCaptive = false
        return state
    }
}
