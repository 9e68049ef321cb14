/// What a policy says for one network state and one set of settings, beyond per-item decisions:
/// the prefetch plan and what happens to running loads when the network gets worse to this
/// state, each with the entry that said it. A row of `ImagePolicy.networkStatePlans()`.
public struct NetworkStatePlan: Sendable, Hashable {
    /// The network state.
    public var network: NetworkState
    /// The policy's settings.
    public var settings: ResolvedSettings
    /// What a list prefetches.
    public var prefetch: PrefetchPlan
    /// The index in `ImagePolicy.prefetch` of the entry that matched; nil when none did.
    public var prefetchEntry: Int?
    /// What happens to running loads when the network gets worse to this state.
    public var runningLoads: RunningLoads
    /// The index in `ImagePolicy.runningLoadsOnWorseNetwork` of the entry that matched; nil when
    /// none did (running loads are then cancelled).
    public var runningLoadsEntry: Int?

    /// Creates a row.
    public init(network: NetworkState, settings: ResolvedSettings, prefetch: PrefetchPlan, prefetchEntry: Int?,
                runningLoads: RunningLoads, runningLoadsEntry: Int?) {
        self.network = network
        self.settings = settings
        self.prefetch = prefetch
        self.prefetchEntry = prefetchEntry
        self.runningLoads = runningLoads
        self.runningLoadsEntry = runningLoadsEntry
    }
}
