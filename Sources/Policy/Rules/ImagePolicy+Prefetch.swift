import Support
extension ImagePolicy {
    /// What a list prefetches in `network` with `settings`: the plan of the first `prefetch`
    /// entry whose condition holds, or `.nothing`. A table read.
    ///
    /// The plan never makes a list download a variant the policy would not load for a visible row
    /// in the same state: apply it with `PrefetchPlan.prefetch(for:)` to each row's decision.
    ///
    /// ```swift
    /// let plan = policy.prefetchPlan(for: NetworkState(.cellular, isExpensive: true), settings: settings)
    /// for row in rowsAhead.prefix(plan.ahead) {
    ///     if let (variant, url) = plan.prefetch(for: policy.decide(row.item, network: state, settings: settings, cached: row.cached)) {
    ///         prefetch(variant, url)
    ///     }
    /// }
    /// ```
    public func prefetchPlan(for network: NetworkState, settings: ResolvedSettings) -> PrefetchPlan {
        networkStateTable.entry(for: network, settings: settings).plan
    }

    /// Whether loads already running when the network gets worse (Wi-Fi to cellular, metered,
    /// roaming) may finish in `network`, although a decision made now would not start them:
    /// `runningLoads(on:settings:) == .finish`.
    public func letsRunningLoadsFinish(on network: NetworkState, settings: ResolvedSettings) -> Bool {
        runningLoads(on: network, settings: settings) == .finish
    }

    /// What happens to loads already running when the network gets worse to `network`: the choice
    /// of the first `runningLoadsOnWorseNetwork` entry whose condition holds, or `.cancel`. A table read.
    public func runningLoads(on network: NetworkState, settings: ResolvedSettings) -> RunningLoads {
        networkStateTable.entry(for: network, settings: settings).runningLoads
    }

    /// Whether an entry of the `prefetch` section or of the running-loads option tests `roaming`.
    public var prefetchReadsRoaming: Bool {
        prefetch.contains { $0.condition.roaming != nil } || runningLoadsOnWorseNetwork.contains { $0.condition.roaming != nil }
    }

    /// Whether an entry of the `prefetch` section or of the running-loads option tests `captive`.
    /// When none does, a captive network gets what offline gets.
    public var prefetchReadsCaptive: Bool {
        prefetch.contains { $0.condition.captive != nil } || runningLoadsOnWorseNetwork.contains { $0.condition.captive != nil }
    }

    /// Every network state the `prefetch` section and the running-loads option can tell apart
    /// (kind × expensive × constrained × roaming, when an entry tests it × captive, when an entry
    /// tests it) for every combination of the settings, with the plan and choice for each, in a
    /// stable order (settings, then kind, then flags).
    public func networkStatePlans() -> [NetworkStatePlan] {
        var rows: [NetworkStatePlan] = []
        let roaming = prefetchReadsRoaming, captive = prefetchReadsCaptive
        for bits in 0..<(1 << settings.count) {
            let settings = ResolvedSettings(bits: UInt16(bits))
            for kind in NetworkKind.allCases {
                for (expensive, isRoaming) in roaming ? [(false, false), (true, false), (true, true)] : [(false, false), (true, false)] {
                    for constrained in [false, true] {
                        for isCaptive in captive ? [false, true] : [false] {
                            let network = NetworkState(kind, isExpensive: expensive, isConstrained: constrained,
                                                       isRoaming: isRoaming, isCaptive: isCaptive)
                            let entry = networkStateTable.entry(for: network, settings: settings)
                            rows.append(NetworkStatePlan(network: network, settings: settings, prefetch: entry.plan,
                                                         prefetchEntry: entry.prefetchEntry < 0 ? nil : Int(entry.prefetchEntry),
                                                         runningLoads: entry.runningLoads,
                                                         runningLoadsEntry: entry.runningLoadsEntry < 0 ? nil : Int(entry.runningLoadsEntry)))
                        }
                    }
                }
            }
        }
        return rows
    }
}
