extension ImagePolicy {
    /// What a list prefetches in `network` with `settings`.
    ///
    /// PLACEHOLDER until the policy files' `prefetch` section lands (issue 8): prefetches nothing.
    public func prefetchPlan(for network: NetworkState, settings: ResolvedSettings) -> PrefetchPlan {
        .nothing
    }

    /// Whether loads already running when the network gets worse (Wi-Fi to cellular, metered,
    /// roaming) may finish in `network`, although a decision made now would not start them.
    ///
    /// PLACEHOLDER until the policy option lands (issue 8): false, running loads are cancelled.
    public func letsRunningLoadsFinish(on network: NetworkState, settings: ResolvedSettings) -> Bool {
        false
    }
}
