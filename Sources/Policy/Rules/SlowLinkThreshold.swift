/// A policy's `slowBelow` threshold: a measured link whose throughput is strictly below
/// `bytesPerSecond` is slow, and rules may test it with `"when": {"slow": true}`.
///
/// An unmeasured link (no `LinkEstimate`) is never slow, and neither is an offline one.
///
/// ```swift
/// let threshold = SlowLinkThreshold(bytesPerSecond: 51_200)   // "slowBelow": {"bytesPerSecond": 51200}
/// threshold.isSlow(LinkEstimate(bytesPerSecond: 30_000))      // true
/// threshold.isSlow(nil)                                      // false
/// ```
public struct SlowLinkThreshold: Sendable, Hashable, CustomStringConvertible {
    /// The most a threshold may say (1 TB/s): more is a typing error.
    public static let maximumBytesPerSecond = 1_000_000_000_000
    /// 51,200 bytes per second (50 KiB/s): PINRemoteImage's "low quality" bound of 50 KB/s, the
    /// threshold of the bundled policies.
    public static let pinRemoteImageLowQuality = SlowLinkThreshold(bytesPerSecond: 51_200)

    /// A link measured below this many bytes per second is slow; from 1 to `maximumBytesPerSecond`
    /// (validation rejects other values).
    public var bytesPerSecond: Int

    /// Creates a threshold.
    public init(bytesPerSecond: Int) {
        self.bytesPerSecond = bytesPerSecond
    }

    /// Whether `estimate` is slow: measured, and below the threshold.
    public func isSlow(_ estimate: LinkEstimate?) -> Bool {
        guard let estimate else { return false }
        return estimate.bytesPerSecond < Double(bytesPerSecond)
    }

    /// `below 51200 B/s`.
    public var description: String { "below \(bytesPerSecond) B/s" }
}
