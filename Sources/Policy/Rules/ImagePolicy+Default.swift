extension ImagePolicy {
    /// The setting the default policy reads: load originals on cellular too.
    public static let alwaysDownloadOriginalImage = "alwaysDownloadOriginalImage"

    /// The default policy, the decision tree of the SDWebImage article (seed 004):
    ///
    /// 1. the original is cached → show it, whatever the network;
    /// 2. Wi-Fi or wired → load the original;
    /// 3. cellular or unknown with `alwaysDownloadOriginalImage` on → load the original;
    /// 4. cellular or unknown → load the thumbnail;
    /// 5. … or the original, when the item has no thumbnail;
    /// 6. offline, thumbnail cached → show it;
    /// 7. offline → the placeholder.
    ///
    /// It prefetches the decided variants 20 rows ahead and 5 behind on a free (not expensive, not
    /// constrained) Wi-Fi or wired link, thumbnails only 5 rows ahead on cellular (or unknown)
    /// that is neither constrained nor roaming, and nothing otherwise (constrained, roaming,
    /// captive, offline, a metered Wi-Fi). Running loads are cancelled when the network gets worse.
    ///
    /// `policies/default.json` holds the same policy as data (a test proves they are equal).
    public static let `default`: ImagePolicy = {
        let metered: Set<NetworkKind> = [.cellular, .unknown]
        let rules = [
            PolicyRule("original-cached", when: RuleCondition(cached: [.original: true]), then: .showCached(.original),
                       reason: "the original is already cached, so it is shown whatever the network"),
            PolicyRule("wifi-original", when: RuleCondition(networks: [.wifi, .wired]), then: .load(.original),
                       reason: "on Wi-Fi or a wired network the original is loaded"),
            PolicyRule("cellular-always-original",
                       when: RuleCondition(networks: metered, settings: [alwaysDownloadOriginalImage: true]),
                       then: .load(.original),
                       reason: "on cellular the setting alwaysDownloadOriginalImage is on, so the original is loaded"),
            PolicyRule("cellular-thumbnail", when: RuleCondition(networks: metered, hasThumbnail: true), then: .load(.thumbnail),
                       reason: "on cellular only the thumbnail is loaded (alwaysDownloadOriginalImage is off)"),
            PolicyRule("cellular-no-thumbnail", when: RuleCondition(networks: metered), then: .load(.original),
                       reason: "on cellular the thumbnail would be loaded, but the item has none, so the original is loaded"),
            PolicyRule("offline-cached-thumbnail", when: RuleCondition(cached: [.thumbnail: true]), then: .showCached(.thumbnail),
                       reason: "offline: the cached thumbnail is shown"),
            PolicyRule("offline-placeholder", then: .placeholder,
                       reason: "offline and nothing cached: the placeholder is shown"),
        ]
        let prefetch = [
            PrefetchRule("free-link", when: RuleCondition(networks: [.wifi, .wired], expensive: false, constrained: false),
                         plan: PrefetchPlan(ahead: 20, behind: 5, variants: .decided)),
            PrefetchRule("cellular-thumbnails", when: RuleCondition(networks: metered, constrained: false, roaming: false),
                         plan: PrefetchPlan(ahead: 5, behind: 0, variants: .thumbnails)),
        ]
        do {
            return try ImagePolicy(name: "default", summary: "The decision tree of the SDWebImage article: original if cached, "
                                   + "else the original on Wi-Fi, the thumbnail on cellular, the cached thumbnail or a placeholder offline.",
                                   settings: [SettingDeclaration(alwaysDownloadOriginalImage, default: false)], rules: rules,
                                   prefetch: prefetch, runningLoadsOnWorseNetwork: [RunningLoadsRule(then: .cancel)])
        } catch {
            // The rules above are fixed; the test suite proves they validate.
            fatalError("the built-in default policy is invalid: \(error)")
        }
    }()
}
