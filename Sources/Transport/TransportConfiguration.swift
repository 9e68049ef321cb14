import HTTPSemantics
/// The limits and behaviour of `CurlTransport`, with documented defaults and named presets.
public struct TransportConfiguration: Sendable, Hashable {
    /// Transfers running at once, over all hosts. Default 8.
    public var maximumConnections: Int = 8
    /// Transfers running at once to one host (scheme, host and port). Default 6.
    public var maximumConnectionsPerHost: Int = 6
    /// Redirects followed at most; only to http and https. Default 5.
    public var maximumRedirects: Int = 5
    /// Time to establish a connection (TCP and TLS). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// Time for a whole transfer, from when it gets a connection slot. Default 60 s.
    public var totalTimeout: Duration = .seconds(60)
    /// Abort a transfer slower than `lowSpeedLimit` bytes per second for `lowSpeedTime`.
    /// Default 1024 bytes/s for 15 s.
    public var lowSpeedLimit: Int = 1024
    /// See `lowSpeedLimit`.
    public var lowSpeedTime: Duration = .seconds(15)
    /// The largest body accepted, enforced while the bytes arrive (also without or against
    /// `Content-Length`, and after decompression). Default 32 MiB.
    public var maximumBodySize: Int = 32 << 20
    /// Verify TLS certificates and host names. Default true.
    public var verifiesTLS: Bool = true
    /// A PEM file of certificate authorities to trust instead of the system's (a device fleet's
    /// private CA, say). Default nil: the system's store.
    public var certificateAuthorities: String?
    /// The `User-Agent` header.
    public var userAgent: String = "imgpolicy/0.1 (libcurl)"
    /// How long the transport gathers a burst of requests before it starts them, so that they
    /// start in priority order even when their tasks reach it out of order (a list's rows are
    /// loaded by tasks of their own, and a prefetch may be queued before a visible row). A request
    /// queued while a connection slot is free opens a gathering, which ends when no request has
    /// been queued for this long, and at the latest four times this long after it opened; then
    /// the most urgent requests start. A request at the top priority (`LoadPriority.visible`, order
    /// 0: what `CurlTransport.download(_:)` uses) starts at once, since nothing can overtake it.
    /// Zero starts every request as soon as it is queued. At most 10 s. Default 2 ms.
    public var gatheringWindow: Duration = .milliseconds(2)
    /// When a failed download is tried again. Default `.standard`: transient failures only, 3
    /// attempts in all, backoff from 0.5 s up to 30 s with full jitter, `Retry-After` up to 60 s.
    public var retry: RetryPolicy = .standard

    /// The defaults.
    public init() {}

    /// The defaults: 8 connections (6 per host), 5 redirects, 10 s connect, 60 s total, 32 MiB,
    /// 3 attempts for transient failures, bursts gathered for 2 ms.
    public static let standard = TransportConfiguration()

    /// For metered links: fewer parallel transfers, 8 MiB maximum body.
    public static let metered: TransportConfiguration = {
        var configuration = TransportConfiguration()
        configuration.maximumConnections = 4
        configuration.maximumConnectionsPerHost = 4
        configuration.maximumBodySize = 8 << 20
        return configuration
    }()
}
