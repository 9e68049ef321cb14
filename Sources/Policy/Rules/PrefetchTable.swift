import Support
/// A policy's `prefetch` section and running-loads option compiled to a lookup table: one entry
/// per network state × settings, holding the plan, the choice and the entries that said them.
/// Built once by `PolicyValidator.compileNetworkStatePlans()`; read by
/// `ImagePolicy.prefetchPlan(for:settings:)` and `runningLoads(on:settings:)`.
struct PrefetchTable: Sendable {
    /// What one network state × settings gets.
    struct Entry: Sendable, Hashable {
        var plan: PrefetchPlan = .nothing
        /// The index of the prefetch entry that matched, -1 for none.
        var prefetchEntry: Int16 = -1
        var runningLoads: RunningLoads = .cancel
        /// The index of the running-loads entry that matched, -1 for none.
        var runningLoadsEntry: Int16 = -1
    }

    /// The bits of a key below the settings: network kind (0–2), expensive, constrained, roaming,
    /// captive, as in `PolicyInput.tableKey`.
    static let settingsShift = 7

    let entries: ContiguousArray<Entry>
    /// `count - 1`; the count is a power of two, so masking keeps any key in range.
    private let mask: Int

    init(entries: ContiguousArray<Entry>) {
        precondition(entries.count > 0 && entries.count & (entries.count - 1) == 0)
        self.entries = entries
        self.mask = entries.count - 1
    }

    /// The number of keys for a policy with `settingCount` settings.
    static func keyCount(settingCount: Int) -> Int { (1 << settingsShift) << settingCount }

    /// The key of `network` with `settings`. A roaming state counts as expensive.
    static func key(_ network: NetworkState, _ settings: ResolvedSettings) -> Int {
        var key = network.kind.index
        if network.isExpensive || network.isRoaming { key |= TableKey.expensive }
        if network.isConstrained { key |= TableKey.constrained }
        if network.isRoaming { key |= TableKey.roaming }
        if network.isCaptive { key |= TableKey.captive }
        return key | Int(settings.bits) << settingsShift
    }

    /// The state and settings a key stands for, or nil for a key no state has (a kind index past
    /// the last kind, roaming without expensive).
    static func state(forKey key: Int) -> (network: NetworkState, settings: ResolvedSettings)? {
        guard let kind = NetworkKind.allCases.first(where: { $0.index == key & TableKey.kindMask }) else { return nil }
        let network = NetworkState(kind, isExpensive: key & TableKey.expensive != 0, isConstrained: key & TableKey.constrained != 0,
                                   isRoaming: key & TableKey.roaming != 0, isCaptive: key & TableKey.captive != 0)
        let settings = ResolvedSettings(bits: UInt16(truncatingIfNeeded: key >> settingsShift))
        return Self.key(network, settings) == key ? (network, settings) : nil
    }

    func entry(for network: NetworkState, settings: ResolvedSettings) -> Entry {
        entries[Self.key(network, settings) & mask]
    }
}
