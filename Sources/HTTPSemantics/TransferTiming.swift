/// The figures of one finished transfer that `LinkEstimator` learns from, as libcurl reports them.
///
/// ```swift
/// // After CURLMSG_DONE, with imgp_easy_getinfo_offset:
/// let timing = TransferTiming(bodyBytes: sizeDownload,                 // CURLINFO_SIZE_DOWNLOAD_T
///                             totalMicroseconds: totalTime,           // CURLINFO_TOTAL_TIME_T
///                             firstByteMicroseconds: startTransfer)   // CURLINFO_STARTTRANSFER_TIME_T
/// estimator.record(timing, on: network)
/// ```
///
/// Every figure is untrusted: `LinkEstimator` ignores a timing whose figures are absurd (see
/// `LinkEstimator.record(_:on:)`); making one never traps.
public struct TransferTiming: Sendable, Hashable {
    /// Body bytes received (`CURLINFO_SIZE_DOWNLOAD_T`): the body only, without headers.
    public var bodyBytes: Int64
    /// Seconds from the start of the transfer to its end (`CURLINFO_TOTAL_TIME_T`), name lookup,
    /// connection and TLS included.
    public var totalSeconds: Double
    /// Seconds from the start to the first byte of the response (`CURLINFO_STARTTRANSFER_TIME_T`).
    public var firstByteSeconds: Double
    /// Whether the body came from a cache (a 304 revalidation, the memory or disk cache) rather than
    /// over the link: such a timing says nothing of the link and is ignored.
    public var fromCache: Bool

    /// A timing in seconds (libcurl's `double` figures `CURLINFO_TOTAL_TIME`,
    /// `CURLINFO_STARTTRANSFER_TIME`, or figures measured by other means).
    public init(bodyBytes: Int64, totalSeconds: Double, firstByteSeconds: Double, fromCache: Bool = false) {
        self.bodyBytes = bodyBytes
        self.totalSeconds = totalSeconds
        self.firstByteSeconds = firstByteSeconds
        self.fromCache = fromCache
    }

    /// A timing from libcurl's `curl_off_t` figures: `CURLINFO_SIZE_DOWNLOAD_T`, and
    /// `CURLINFO_TOTAL_TIME_T` and `CURLINFO_STARTTRANSFER_TIME_T` in microseconds.
    public init(bodyBytes: Int64, totalMicroseconds: Int64, firstByteMicroseconds: Int64, fromCache: Bool = false) {
        self.init(bodyBytes: bodyBytes, totalSeconds: Double(totalMicroseconds) / 1_000_000,
                  firstByteSeconds: Double(firstByteMicroseconds) / 1_000_000, fromCache: fromCache)
    }
}
