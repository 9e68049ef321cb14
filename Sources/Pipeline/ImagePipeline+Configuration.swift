import Logging
import Support
import Transport
import Caching
import Accounting

extension ImagePipeline {
    /// Everything an `ImagePipeline` is made of and how it behaves, in one value: its downloader
    /// and caches, the bound on queued disk writes, how it talks HTTP, what measures the link,
    /// where it reports. Every option but the downloader and the disk cache has a default.
    ///
    /// ```swift
    /// var configuration = ImagePipeline.Configuration(downloader: CurlTransport(), disk: disk)
    /// configuration.diskWrites = .waitWhenFull          // a batch tool: never drop a write
    /// configuration.http = HTTPOptions.standard.following(policy)
    /// let pipeline = ImagePipeline(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// What downloads (a `CurlTransport`, or a test's `ScriptedDownloader`).
        public var downloader: any ImageDownloading
        /// The memory cache. Default: a new `MemoryCache()` (its default capacity).
        public var memory: MemoryCache
        /// The disk cache; nil keeps images in memory only (no partial bodies, no revalidation).
        public var disk: DiskCache?
        /// Bounds the queue of disk-cache writes. Default: `.dropWhenFull` (an app's loads never
        /// wait for the disk); a batch tool takes `.waitWhenFull`.
        public var diskWrites: DiskWritePolicy
        /// How the pipeline talks HTTP: revalidation, `Save-Data`, `Accept`, the clock.
        /// Default: `.standard`.
        public var http: HTTPOptions
        /// Measures the link from the pipeline's downloads (nil: nothing is measured). Default: a
        /// new `LinkEstimator()`.
        public var linkEstimator: LinkEstimator?
        /// Where failed loads, failed disk writes and dropped writes are reported. Default:
        /// `.disabled`.
        public var logger: Logger

        /// A configuration with `downloader` and `disk`, and the defaults for everything else.
        public init(downloader: any ImageDownloading, memory: MemoryCache = MemoryCache(), disk: DiskCache?,
                    diskWrites: DiskWritePolicy = .dropWhenFull, http: HTTPOptions = .standard,
                    linkEstimator: LinkEstimator? = LinkEstimator(), logger: Logger = .disabled) {
            self.downloader = downloader
            self.memory = memory
            self.disk = disk
            self.diskWrites = diskWrites
            self.http = http
            self.linkEstimator = linkEstimator
            self.logger = logger
        }
    }
}
