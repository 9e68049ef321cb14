/// Which retries of a failed download are worth making, within the transport's own bounds
/// (`RetryPolicy` in `Fetch`): a policy's `retryOnCostlyLink` option says it for links that cost
/// (`NetworkState.isFreeLink` false); a free link retries as the transport is configured.
///
/// A retry within one load resumes from the bytes already received when it can (a strong
/// validator and a `Content-Length`); otherwise it downloads them again. On a link that costs
/// money, that second download is what `withoutRedownloading` avoids, the default there.
///
/// ```json
/// "retryOnCostlyLink": "never"
/// ```
public enum RetryScope: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Every retry the `RetryPolicy` allows.
    case asConfigured = "always"
    /// Only retries that download no image byte again: after a failure that brought no image
    /// bytes (a refused connection, a 503), or that can resume from what came. A body cut short
    /// that cannot be resumed is not asked for again.
    case withoutRedownloading = "without-redownload"
    /// No retry: one attempt.
    case never

    /// The behaviour on a costly link when the policy does not say.
    public static let costlyLinkDefault = RetryScope.withoutRedownloading

    /// `always`, `without-redownload` or `never`, as in policy files.
    public var description: String { rawValue }
}
