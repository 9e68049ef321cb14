import Support
import Policy
import Transport
import Accounting

/// The pipeline's stage of measurement and accounting: it records each response's figures on the
/// link its load was asked for (`LinkEstimator`), reads the estimate back for decisions and
/// request hints, and counts into the background recorder the bytes nobody else counts (a
/// background revalidation's download, failed attempts of a load nobody waited for).
///
/// - A load without a network, or a response without figures, is not measured.
/// - Nothing is counted while no background recorder is set (`backgroundUsage`).
/// - The recorder is called outside any lock of the pipeline (it calls its observers).
///
/// Thread safety: every member may be used from any thread at once.
final class LinkAccounting: Sendable {
    /// Measures the link (nil: nothing is measured).
    let estimator: LinkEstimator?
    // Guards the background recorder.
    private let usage = Locked<DataUsageRecorder?>(nil)

    /// A stage measuring with `estimator`.
    init(estimator: LinkEstimator?) {
        self.estimator = estimator
    }

    /// Where the bytes the pipeline downloads on its own are counted (nil: not counted).
    var backgroundUsage: DataUsageRecorder? {
        get { usage.withLock { $0 } }
        set { usage.withLock { $0 = newValue } }
    }

    /// The link measured on `network`'s kind, if any.
    func estimate(for network: NetworkState) -> LinkEstimate? {
        estimator?.estimate(for: network)
    }

    /// Records `response`'s figures on the network its load was asked for.
    func measure(_ response: DownloadResponse, on network: NetworkState?) {
        guard let estimator, let network, let timing = response.timing else { return }
        estimator.record(timing, on: network)
    }

    /// Counts `bytes` received by attempts no waiter's loader counts (a stopped transfer whose
    /// waiters left first, a load nobody waited for), under `network` (nil: unknown).
    func recordUncounted(_ bytes: Int, on network: NetworkState?) {
        guard bytes > 0, let usage = backgroundUsage else { return }
        usage.recordFailedBytes(bytes, on: network ?? NetworkState(.unknown))
    }

    /// Counts what a background revalidation cost: a replacement (answered 200) as a download
    /// of `variant` (`.original` when nil), the bytes of failed attempts, the retries of a
    /// failure; under `network` (nil: unknown).
    func recordBackgroundRevalidation(_ outcome: Result<FetchedImage, FetchError>, variant: Variant?, on network: NetworkState?) {
        guard let usage = backgroundUsage else { return }
        let link = network ?? NetworkState(.unknown)
        switch outcome {
        case .success(let image) where image.source == .network:
            usage.recordBackgroundDownload(bytes: image.bytes.count, retries: image.retries, failedBytes: image.failedBytes,
                                           variant: variant ?? .original, on: link)
        case .success(let image):
            usage.recordFailedBytes(image.failedBytes, on: link)
        case .failure(let error):
            usage.recordRetries(max(1, error.attempts) - 1, on: link)
            usage.recordFailedBytes(error.receivedBytes, on: link)
        }
    }
}
