/// What the link has been measured to carry: throughput in bytes per second and latency (time to
/// the first byte), averaged over recent transfers. A decision takes a `LinkEstimate?`: nil until
/// the link has been measured, and an unmeasured link is never slow.
///
/// `Policy` does not measure anything; `Fetch.LinkEstimator` builds estimates from transfers.
///
/// ```swift
/// let estimate = LinkEstimate(bytesPerSecond: 30_000, latency: .milliseconds(400))
/// let decision = policy.decide(item, network: state, settings: settings, cached: [], estimate: estimate)
/// ```
public struct LinkEstimate: Sendable, Hashable, CustomStringConvertible {
    /// Measured throughput, bytes per second: finite and not negative.
    public var bytesPerSecond: Double
    /// Measured latency (time to the first byte of a response): not negative.
    public var latency: Duration
    /// How many transfers the estimate is made of (1 for a value given by hand).
    public var sampleCount: Int

    /// Creates an estimate. Values that are not finite, non-negative numbers are clamped, never
    /// trapped on: NaN and negatives to 0, +infinity to `Double.greatestFiniteMagnitude`; a
    /// negative latency to zero, a sample count below 1 to 1.
    public init(bytesPerSecond: Double, latency: Duration = .zero, sampleCount: Int = 1) {
        self.bytesPerSecond = bytesPerSecond.isNaN ? 0 : min(max(bytesPerSecond, 0), .greatestFiniteMagnitude)
        self.latency = max(latency, .zero)
        self.sampleCount = max(sampleCount, 1)
    }

    /// `30000 B/s, latency 0.4 seconds, 3 transfers`.
    public var description: String {
        let rate = bytesPerSecond < 1e15 ? String(Int64(bytesPerSecond.rounded())) : "\(bytesPerSecond)"
        return "\(rate) B/s, latency \(latency), \(sampleCount) transfer\(sampleCount == 1 ? "" : "s")"
    }
}
