import Support
import Logging
import Policy
import HTTPSemantics

/// Measures the link from the transfers made over it: an exponentially weighted moving average
/// (EWMA) of throughput and latency, for the network kind the transfers were made on, read as a
/// `LinkEstimate` that decisions take (`ImagePolicy.decide(…, estimate:)`).
///
/// ```swift
/// let estimator = LinkEstimator()
/// // The transport, after each transfer that received a body from the network:
/// estimator.record(TransferTiming(bodyBytes: 120_000, totalMicroseconds: 900_000,
///                                 firstByteMicroseconds: 300_000), on: network)
/// // The loader, when it decides:
/// let decision = policy.decide(item, network: network, settings: settings, cached: cached,
///                              estimate: estimator.estimate(for: network))
/// ```
///
/// What a transfer counts for (`record(_:on:)`):
/// - throughput: `bodyBytes / totalSeconds`, the rate at which a whole image arrives (what a
///   person waits for, latency included, as libcurl's `CURLINFO_SPEED_DOWNLOAD_T`);
/// - latency: `firstByteSeconds` (name lookup, connection, TLS and the server's wait).
///
/// Ignored, never trapped on: a body from a cache, a body under `Configuration.minimumBodyBytes`
/// (its time is mostly latency, so its rate says little of the bandwidth), a total time that is
/// not a finite number of seconds above 0 and at most a day, a time to the first byte that is
/// negative or not finite (one above the total counts as the total), an offline network.
///
/// Networks: the estimate is for the network kind the transfers were made on. A transfer made on
/// another kind, or `networkChanged(to:)` with another kind, starts over: a Wi-Fi or cellular link
/// left and come back to may be another one (another access point, another cell), so its old
/// figures are not kept. An estimate is nil until a transfer counts on the current kind.
///
/// Thread safety: every member may be used from any task or thread at once; the state is behind
/// one lock, and nothing is called out while it is held.
public final class LinkEstimator: Sendable {
    /// How the estimator weighs and filters transfers.
    public struct Configuration: Sendable, Hashable {
        /// The weight of a new transfer in the average, above 0 and at most 1 (default 0.3: the
        /// estimate follows a change of the link within about five transfers). A value out of
        /// range is clamped to it; NaN counts as the default.
        public var smoothing: Double
        /// Bodies smaller than this are ignored (default 16 KiB, 16,384 bytes: a smaller image
        /// is mostly waiting for its first byte, so its rate says little of the bandwidth).
        public var minimumBodyBytes: Int64

        /// Creates a configuration.
        public init(smoothing: Double = 0.3, minimumBodyBytes: Int64 = 16_384) {
            self.smoothing = smoothing.isNaN ? 0.3 : min(max(smoothing, .leastNormalMagnitude), 1)
            self.minimumBodyBytes = max(minimumBodyBytes, 1)
        }

        /// The defaults: smoothing 0.3, bodies from 16 KiB.
        public static let `default` = Configuration()
    }

    private struct Average {
        var bytesPerSecond: Double
        var latencySeconds: Double
        var samples: Int
    }

    private struct State {
        /// The kind the average is for; nil before the first transfer or change.
        var kind: NetworkKind?
        var average: Average?
    }

    /// The weights and filters.
    public let configuration: Configuration
    private let logger: Logger
    // Guards the current network kind and its average.
    private let state = Locked(State())

    /// Creates an estimator that knows nothing yet.
    public init(configuration: Configuration = .default, logger: Logger = .disabled) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Counts a finished transfer made on `network`. Returns whether it counted (see the type's
    /// documentation for what is ignored).
    @discardableResult
    public func record(_ timing: TransferTiming, on network: NetworkState) -> Bool {
        guard let sample = sample(of: timing), network.kind != .offline else {
            logger.trace("transfer not counted for the link estimate",
                         metadata: ["bytes": "\(timing.bodyBytes)", "seconds": "\(timing.totalSeconds)", "cache": "\(timing.fromCache)"])
            return false
        }
        let alpha = configuration.smoothing
        let (restarted, estimate) = state.withLock { state -> (Bool, Average) in
            var restarted = false
            if state.kind != network.kind {
                restarted = state.average != nil
                state.kind = network.kind
                state.average = nil
            }
            if var average = state.average {
                average.bytesPerSecond += alpha * (sample.bytesPerSecond - average.bytesPerSecond)
                average.latencySeconds += alpha * (sample.latencySeconds - average.latencySeconds)
                average.samples = average.samples < Int.max ? average.samples + 1 : Int.max
                state.average = average
            } else {
                state.average = sample
            }
            return (restarted, state.average ?? sample)
        }
        if restarted { logger.debug("link estimate restarted: the network kind changed", metadata: ["network": "\(network.kind)"]) }
        logger.trace("link estimate", metadata: ["network": "\(network.kind)", "bytesPerSecond": "\(Int64(estimate.bytesPerSecond))",
                                                 "latencySeconds": "\(estimate.latencySeconds)", "transfers": "\(estimate.samples)"])
        return true
    }

    /// Tells the estimator the network is now `network` (from a reachability listener): a change
    /// of kind drops the figures of the old one, before any transfer is made on the new one.
    public func networkChanged(to network: NetworkState) {
        state.withLock { state in
            guard state.kind != network.kind else { return }
            state.kind = network.kind
            state.average = nil
        }
    }

    /// The measured link for `network`: nil offline, before a transfer counted on its kind, or
    /// when the figures are for another kind.
    public func estimate(for network: NetworkState) -> LinkEstimate? {
        guard network.kind != .offline else { return nil }
        let average = state.withLock { state in state.kind == network.kind ? state.average : nil }
        return average.map {
            LinkEstimate(bytesPerSecond: $0.bytesPerSecond, latency: .microseconds(Int64(($0.latencySeconds * 1_000_000).rounded())),
                         sampleCount: $0.samples)
        }
    }

    /// Forgets everything measured.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// The throughput and latency of `timing`, or nil when it is ignored.
    private func sample(of timing: TransferTiming) -> Average? {
        guard !timing.fromCache, timing.bodyBytes >= configuration.minimumBodyBytes,
              timing.totalSeconds.isFinite, timing.totalSeconds > 0, timing.totalSeconds <= Self.longestTransferSeconds,
              timing.firstByteSeconds.isFinite, timing.firstByteSeconds >= 0 else { return nil }
        let rate = Double(timing.bodyBytes) / timing.totalSeconds
        guard rate.isFinite else { return nil }
        return Average(bytesPerSecond: rate, latencySeconds: min(timing.firstByteSeconds, timing.totalSeconds), samples: 1)
    }

    /// A transfer said to take longer than a day is a wrong figure.
    static let longestTransferSeconds: Double = 86_400
}
