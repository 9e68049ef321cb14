import Policy
import HTTPSemantics
import Support

/// The `ECT` and `Downlink` client hints for a measured link, as the Network Information API
/// defines them (WICG netinfo; the values Chrome sends).
///
/// - `Downlink`: the throughput in megabits per second, rounded to the nearest 25 kilobits per
///   second and capped at 10 Mb/s (so that a hint never fingerprints a fast link): `0.175`, `10`.
/// - `ECT`: the effective connection type from the spec's table, by latency or throughput,
///   whichever is worse: `slow-2g` (latency ≥ 2 s or ≤ 50 kb/s), `2g` (≥ 1.4 s or ≤ 70 kb/s),
///   `3g` (≥ 270 ms or ≤ 700 kb/s), else `4g`. The latency is the estimate's time to the first
///   byte (a round trip and the server's wait).
///
/// ```swift
/// let hints = NetworkHints(LinkEstimate(bytesPerSecond: 30_000, latency: .milliseconds(300)))
/// // hints?.effectiveType == "3g", hints?.downlink == "0.25"
/// ```
public struct NetworkHints: Sendable, Hashable {
    /// The `ECT` value: `slow-2g`, `2g`, `3g` or `4g`.
    public var effectiveType: String
    /// The `Downlink` value, megabits per second: `0.25`, `1.5`, `10`.
    public var downlink: String

    /// The hints for `estimate`; nil when its throughput is not a finite number.
    public init?(_ estimate: LinkEstimate) {
        guard estimate.bytesPerSecond.isFinite else { return nil }
        let kilobits = estimate.bytesPerSecond * 8 / 1000
        // Nearest 25 kb/s, at most 10 Mb/s: a whole number of 25 kb/s steps, 0…400.
        let steps = Int(min((kilobits / 25).rounded(), 400))
        let megabits = steps * 25
        let whole = megabits / 1000, fraction = megabits % 1000
        var text = String(whole)
        if fraction > 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        downlink = text
        let latency = estimate.latency.components
        let milliseconds = Double(latency.seconds) * 1000 + Double(latency.attoseconds) / 1e15
        switch (milliseconds, kilobits) {
        case (2000..., _), (_, ...50): effectiveType = "slow-2g"
        case (1400..., _), (_, ...70): effectiveType = "2g"
        case (270..., _), (_, ...700): effectiveType = "3g"
        default: effectiveType = "4g"
        }
    }
}
