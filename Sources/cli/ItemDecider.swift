import Policy

/// Decides every item of one run of the command with one reading of the network state.
///
/// Detecting the network (`LinuxReachability.currentState`) costs about half a millisecond and
/// forty system calls; more importantly, one run must not decide half of its items for Wi-Fi and
/// the rest for cellular. The provider is read once, when the decider is made; every item is
/// then decided with that value, which `reachability` also offers, as a `FixedReachability`, to
/// library types that ask for a provider.
struct ItemDecider {
    let policy: ImagePolicy
    let settings: ResolvedSettings
    let cache: any CacheInspecting
    /// The network state of the run.
    let network: NetworkState
    /// The same state as a provider, for library types that take one.
    let reachability: FixedReachability
    /// The measured link (`--throughput`), nil when not given.
    let estimate: LinkEstimate?

    /// Reads `reachability.currentState` once (then applies `--expensive`, `--constrained`,
    /// `--roaming`, which implies expensive, and `--captive`).
    init(policy: ImagePolicy, settings: ResolvedSettings, cache: any CacheInspecting,
         reachability: any ReachabilityProviding, expensive: Bool = false, constrained: Bool = false,
         roaming: Bool = false, captive: Bool = false, estimate: LinkEstimate? = nil) {
        var state = reachability.currentState
        if expensive { state.isExpensive = true }
        if constrained { state.isConstrained = true }
        if roaming { state.isRoaming = true; state.isExpensive = true }
        if captive { state.isCaptive = true }
        self.policy = policy
        self.settings = settings
        self.cache = cache
        network = state
        self.reachability = FixedReachability(state)
        self.estimate = estimate
    }

    /// What to show for `item` in a slot `displayWidth` pixels wide (`--size`), with the facts it
    /// was decided from (for `--explain`).
    func decide(_ item: ImageItem, displayWidth: Int? = nil) -> (decision: Decision, input: PolicyInput) {
        let cached = cache.cachedVariants(of: item)
        // The rungs are asked about only for a policy that reads them or an item with a ladder
        // (one question per rung).
        let cachedRungs = policy.cachedRungs(of: item, in: cache)
        let decision = policy.decide(item, network: network, settings: settings, cached: cached, cachedRungs: cachedRungs,
                                     displayWidth: displayWidth, estimate: estimate)
        return (decision, policy.input(for: item, network: network, settings: settings, cached: cached, cachedRungs: cachedRungs,
                                       displayWidth: displayWidth, estimate: estimate))
    }
}
