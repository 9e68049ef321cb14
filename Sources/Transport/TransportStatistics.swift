import HTTPSemantics
/// What a `CurlTransport` has done since it started, for data accounting and tests.
///
/// ```swift
/// let retries = transport.statistics.retries   // attempts made again after a transient failure
/// ```
public struct TransportStatistics: Sendable, Hashable {
    /// Attempts made again after a transient failure (a download retried twice counts 2).
    public var retries = 0
    /// Downloads that failed for good after at least one retry.
    public var failedAfterRetries = 0

    /// Counts as given (none by default).
    public init(retries: Int = 0, failedAfterRetries: Int = 0) {
        self.retries = retries
        self.failedAfterRetries = failedAfterRetries
    }
}
