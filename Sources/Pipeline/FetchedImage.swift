import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics

/// An image's bytes and where they came from.
///
/// In use: the `Fetch` guide “Caching and Data Accounting”.
public struct FetchedImage: Sendable, Hashable {
    /// Where the bytes came from (`ImageSource`).
    public typealias Source = ImageSource

    /// The URL.
    public var url: ImageURL
    /// The image file's bytes.
    public var bytes: [UInt8]
    /// Where they came from.
    public var source: Source
    /// Attempts made again after transient failures before this download succeeded (0 for a
    /// cache hit or a first-time success): counted by `DataUsageRecorder`.
    public var retries: Int
    /// Bytes of this download kept from an earlier, interrupted transfer (a resumed download:
    /// not downloaded again), 0 otherwise: counted by `DataUsageRecorder`.
    public var resumedBytes: Int
    /// Body bytes received from the network for nothing before this image was had: attempts that
    /// failed and were retried, a response refused (a resumed body that did not add up), or a
    /// revalidation that failed before the stored copy was shown. 0 otherwise: counted by
    /// `DataUsageRecorder` as bytes of failed attempts.
    public var failedBytes: Int

    /// Creates a result; negative counts count as 0.
    public init(url: ImageURL, bytes: [UInt8], source: Source, retries: Int = 0, resumedBytes: Int = 0, failedBytes: Int = 0) {
        self.url = url
        self.bytes = bytes
        self.source = source
        self.retries = max(0, retries)
        self.resumedBytes = max(0, resumedBytes)
        self.failedBytes = max(0, failedBytes)
    }
}
