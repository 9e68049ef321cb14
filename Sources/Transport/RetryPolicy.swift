import HTTPSemantics
import Support
/// When `CurlTransport` tries a failed download again: transient failures only (connection
/// errors, timeouts, a body cut short, HTTP 5xx except 501 and 505, 408, 429), a bounded number of
/// times, after an exponential backoff with full jitter, or after the wait the server asked for
/// with `Retry-After`. Never for another 4xx, a response that is not an image, a body too large, a
/// refused redirect or a TLS verification failure: asking again would get the same answer.
///
/// The wait before retry `n` (1 for the first retry) is a random duration between zero and
/// `min(maximumDelay, baseDelay × 2^(n−1))` ("full jitter", so that many clients that failed
/// together do not come back together). A response with `Retry-After` (a 429 or a 503, say) is
/// retried after exactly that wait, without jitter; if the wait is longer than
/// `maximumRetryAfter`, the download fails at once with the response's status.
///
/// ```swift
/// var configuration = TransportConfiguration()
/// configuration.retry = RetryPolicy(attempts: 5, baseDelay: .seconds(1), maximumDelay: .seconds(60))
/// configuration.retry = .never          // one attempt, as before retries existed
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; 1 means no retry. Default 3.
    public var attempts: Int
    /// The backoff's first ceiling; it doubles with each retry. Default 0.5 s.
    public var baseDelay: Duration
    /// The backoff's largest ceiling. Default 30 s.
    public var maximumDelay: Duration
    /// The longest `Retry-After` honoured; a longer one fails the download at once. Default 60 s.
    public var maximumRetryAfter: Duration

    /// A policy; see the type's documentation.
    public init(attempts: Int = 3, baseDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30),
                maximumRetryAfter: Duration = .seconds(60)) {
        self.attempts = attempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The defaults: 3 attempts, 0.5 s base, 30 s maximum backoff, `Retry-After` up to 60 s.
    public static let standard = RetryPolicy()

    /// One attempt: failures are final.
    public static let never = RetryPolicy(attempts: 1)

    /// What to do after a failed attempt.
    enum Next: Equatable {
        /// Try again after `delay`; `serverAsked` when the delay is the response's `Retry-After`.
        case retry(after: Duration, serverAsked: Bool)
        /// The failure is final.
        case giveUp
    }

    /// What to do after attempt number `attempt` (1 for the first) failed with `failure`, whose
    /// response asked for `retryAfter`; `random` draws the jitter.
    func next(after failure: FetchError.Code, attempt: Int, retryAfter: RetryAfter?,
              using random: inout some RandomNumberGenerator) -> Next {
        guard failure.isTransient, attempt < attempts else { return .giveUp }
        if let retryAfter {
            return retryAfter.delay <= maximumRetryAfter ? .retry(after: retryAfter.delay, serverAsked: true) : .giveUp
        }
        return .retry(after: backoff(beforeRetry: attempt, using: &random), serverAsked: false)
    }

    /// A random wait between zero and `min(maximumDelay, baseDelay × 2^(retry−1))`.
    func backoff(beforeRetry retry: Int, using random: inout some RandomNumberGenerator) -> Duration {
        var ceiling = max(.zero, baseDelay)
        var doublings = max(0, retry - 1)
        while doublings > 0 && ceiling < maximumDelay {
            ceiling *= 2
            doublings -= 1
        }
        ceiling = min(ceiling, max(.zero, maximumDelay))
        let (whole, overflow) = ceiling.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = overflow ? Int64.max / 2 : whole + ceiling.components.attoseconds / 1_000_000_000
        guard nanoseconds > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: 0...nanoseconds, using: &random))
    }
}
