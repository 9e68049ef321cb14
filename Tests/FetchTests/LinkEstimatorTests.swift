import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// `LinkEstimator`: the EWMA of throughput and latency per network kind, tiny bodies and cache
/// hits ignored, a change of kind starting over, hostile figures never trapping.
struct LinkEstimatorTests {
    static let wifi = NetworkState(.wifi)
    static let cellular = NetworkState(.cellular, isExpensive: true)

    /// A transfer of `bytes` in `seconds`, its first byte after `firstByte`.
    static func timing(_ bytes: Int64, _ seconds: Double, firstByte: Double = 0.1, fromCache: Bool = false) -> TransferTiming {
        TransferTiming(bodyBytes: bytes, totalSeconds: seconds, firstByteSeconds: firstByte, fromCache: fromCache)
    }

    @Test func theFirstTransferIsTheEstimateThenEachWeighsSmoothing() throws {
        let estimator = LinkEstimator(configuration: .init(smoothing: 0.25))
        #expect(estimator.estimate(for: Self.wifi) == nil, "unmeasured until a transfer counts")
        #expect(estimator.record(Self.timing(100_000, 1, firstByte: 0.2), on: Self.wifi))
        #expect(estimator.estimate(for: Self.wifi) == LinkEstimate(bytesPerSecond: 100_000, latency: .milliseconds(200), sampleCount: 1))
        #expect(estimator.record(Self.timing(20_000, 1, firstByte: 0.6), on: Self.wifi))
        // 100000 + 0.25 × (20000 − 100000) = 80000; 0.2 + 0.25 × (0.6 − 0.2) = 0.3.
        #expect(estimator.estimate(for: Self.wifi) == LinkEstimate(bytesPerSecond: 80_000, latency: .milliseconds(300), sampleCount: 2))
        estimator.record(Self.timing(20_000, 1, firstByte: 0.3), on: Self.wifi)
        let third = try #require(estimator.estimate(for: Self.wifi))
        #expect(abs(third.bytesPerSecond - 65_000) < 1e-6 && third.sampleCount == 3)
    }

    @Test func aSlowLinkConvergesBelowTheThresholdAndTripsSlow() throws {
        let estimator = LinkEstimator()
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/slow-wifi-thumbnails.json")
        let item = ImageItem(id: "x", original: ImageURL("https://img.example/o.jpg")!, thumbnail: ImageURL("https://img.example/t.jpg"))
        func rule() -> String {
            policy.decide(item, network: Self.wifi, settings: policy.defaultSettings, cached: [],
                          estimate: estimator.estimate(for: Self.wifi)).rule
        }
        #expect(rule() == "wifi-original", "unmeasured is not slow")
        estimator.record(Self.timing(1_000_000, 1), on: Self.wifi)
        #expect(rule() == "wifi-original")
        var transfers = 0
        while rule() == "wifi-original" && transfers < 100 {
            estimator.record(Self.timing(30_000, 1), on: Self.wifi)   // 30 KB/s
            transfers += 1
        }
        // 1e6 × 0.7^n + 3e4 × (1 − 0.7^n) < 51200 from n = 11.
        #expect(transfers == 11)
    }

    struct Ignored: Sendable, CustomTestStringConvertible {
        var label: String
        var timing: TransferTiming
        var network: NetworkState = LinkEstimatorTests.wifi
        var testDescription: String { label }
    }

    static let ignored: [Ignored] = [
        Ignored(label: "a tiny body (under 16 KiB)", timing: timing(16_383, 0.001)),
        Ignored(label: "an empty body", timing: timing(0, 1)),
        Ignored(label: "a negative size", timing: timing(-5, 1)),
        Ignored(label: "a cache hit", timing: timing(1_000_000, 1, fromCache: true)),
        Ignored(label: "a zero duration", timing: timing(100_000, 0, firstByte: 0)),
        Ignored(label: "a negative duration", timing: timing(100_000, -1)),
        Ignored(label: "a NaN duration", timing: timing(100_000, .nan)),
        Ignored(label: "an infinite duration", timing: timing(100_000, .infinity)),
        Ignored(label: "a duration over a day", timing: timing(100_000, 86_401)),
        Ignored(label: "a NaN first byte", timing: timing(100_000, 1, firstByte: .nan)),
        Ignored(label: "a negative first byte", timing: timing(100_000, 1, firstByte: -0.5)),
        Ignored(label: "negative microseconds",
                timing: TransferTiming(bodyBytes: 100_000, totalMicroseconds: -1, firstByteMicroseconds: 0)),
        Ignored(label: "offline", timing: timing(100_000, 1), network: NetworkState(.offline)),
    ]

    @Test("a transfer that says nothing of the link is ignored", arguments: ignored)
    func ignoredTransfers(_ row: Ignored) {
        let estimator = LinkEstimator()
        #expect(!estimator.record(row.timing, on: row.network))
        #expect(estimator.estimate(for: row.network) == nil)
        // Nor does it disturb an estimate already made.
        estimator.record(Self.timing(50_000, 1), on: Self.wifi)
        estimator.record(row.timing, on: row.network)
        #expect(estimator.estimate(for: Self.wifi)?.bytesPerSecond == 50_000)
    }

    @Test func hugeAndExtremeFiguresNeverTrap() throws {
        let estimator = LinkEstimator()
        #expect(estimator.record(TransferTiming(bodyBytes: .max, totalMicroseconds: 1, firstByteMicroseconds: .max), on: Self.wifi))
        let huge = try #require(estimator.estimate(for: Self.wifi))
        #expect(huge.bytesPerSecond.isFinite && huge.bytesPerSecond > 9e24)
        #expect(huge.latency == .microseconds(1), "a first byte after the end counts as the end")
        #expect(estimator.record(TransferTiming(bodyBytes: .max, totalSeconds: .leastNonzeroMagnitude, firstByteSeconds: 0), on: Self.wifi) == false,
                "a rate that is not finite is ignored")
        #expect(estimator.record(Self.timing(16_384, 86_400, firstByte: 86_400), on: Self.wifi))
        let slowest = try #require(estimator.estimate(for: Self.wifi))
        #expect(slowest.bytesPerSecond.isFinite && slowest.sampleCount == 2)
        _ = LinkEstimator(configuration: .init(smoothing: .nan, minimumBodyBytes: -1))
        #expect(LinkEstimator.Configuration(smoothing: 7).smoothing == 1)
        #expect(LinkEstimator.Configuration(smoothing: -1).smoothing > 0)
    }

    @Test func microsecondsFromLibcurl() {
        let timing = TransferTiming(bodyBytes: 64_000, totalMicroseconds: 2_000_000, firstByteMicroseconds: 500_000)
        #expect(timing == TransferTiming(bodyBytes: 64_000, totalSeconds: 2, firstByteSeconds: 0.5))
        let estimator = LinkEstimator()
        estimator.record(timing, on: Self.wifi)
        #expect(estimator.estimate(for: Self.wifi) == LinkEstimate(bytesPerSecond: 32_000, latency: .milliseconds(500)))
    }

    @Test func eachNetworkKindIsMeasuredApartAndAChangeStartsOver() {
        let estimator = LinkEstimator()
        estimator.record(Self.timing(1_000_000, 1), on: Self.wifi)
        #expect(estimator.estimate(for: Self.cellular) == nil, "Wi-Fi figures are not cellular ones")
        #expect(estimator.estimate(for: NetworkState(.wifi, isExpensive: true))?.bytesPerSecond == 1_000_000,
                "the same kind, whatever its cost")
        #expect(estimator.estimate(for: NetworkState(.offline)) == nil)
        estimator.record(Self.timing(20_000, 1), on: Self.cellular)
        #expect(estimator.estimate(for: Self.cellular) == LinkEstimate(bytesPerSecond: 20_000, latency: .milliseconds(100)),
                "the first cellular transfer is the estimate: nothing of the Wi-Fi is mixed in")
        #expect(estimator.estimate(for: Self.wifi) == nil, "the Wi-Fi left may not be the one come back to")
        estimator.networkChanged(to: Self.wifi)
        #expect(estimator.estimate(for: Self.cellular) == nil)
        estimator.record(Self.timing(100_000, 1), on: Self.wifi)
        estimator.networkChanged(to: NetworkState(.wifi, isConstrained: true))
        #expect(estimator.estimate(for: Self.wifi)?.sampleCount == 1, "a change that keeps the kind keeps the figures")
        estimator.reset()
        #expect(estimator.estimate(for: Self.wifi) == nil)
    }

    @Test func manyThreadsAtOnce() async {
        let estimator = LinkEstimator()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        estimator.record(Self.timing(Int64(20_000 + index), 1), on: task % 2 == 0 ? Self.wifi : Self.cellular)
                        _ = estimator.estimate(for: Self.wifi)
                    }
                }
            }
        }
        let estimate = estimator.estimate(for: Self.wifi) ?? estimator.estimate(for: Self.cellular)
        #expect(estimate.map { (20_000...20_500).contains($0.bytesPerSecond) } == true)
    }
}
