import Support
/// A policy's `revalidateStale` option: on which links a stale cached image (past its HTTP
/// freshness) is revalidated with the server, in the background, while the stale copy is shown.
/// Offline or captive nothing is ever revalidated: the stale copy is shown.
///
/// ```json
/// "revalidateStale": "any-link"
/// ```
///
/// Without the option the app's `HTTPOptions` decide (by default as `freeLink`).
public enum StaleRevalidation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// On a free link only (`NetworkState.isFreeLink`): Wi-Fi, wired or unknown, neither
    /// expensive, constrained, roaming nor captive; never cellular. On other links the stale copy
    /// is shown without a request (as `stale-if-error` would).
    case freeLink = "free-link"
    /// On any link that reaches the internet: expensive, constrained and roaming ones too (not a
    /// captive one, where the request could not reach the server).
    case anyLink = "any-link"
    /// Never: stale copies are shown as they are until evicted (a policy that spends no byte on
    /// checking).
    case never

    /// The behaviour without the option (the `HTTPOptions` defaults).
    public static let `default` = StaleRevalidation.freeLink

    /// Whether a stale entry is revalidated on `network`.
    public func allows(on network: NetworkState) -> Bool {
        guard network.kind != .offline, !network.isCaptive else { return false }
        switch self {
        case .freeLink: return network.isFreeLink
        case .anyLink: return true
        case .never: return false
        }
    }

    /// `free-link`, `any-link` or `never`, as in policy files.
    public var description: String { rawValue }
}
