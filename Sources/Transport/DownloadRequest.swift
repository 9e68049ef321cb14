import Policy
import HTTPSemantics

/// One request for an image: its URL, extra header fields, priority, who hears of the body while
/// it arrives, the bytes it may resume from, and which retries it may make.
///
/// ```swift
/// var request = DownloadRequest(url: url, priority: RequestPriority(.visible))
/// request.headers = [("Accept", "image/webp,image/jpeg")]
/// request.resuming = disk.partial(for: url)      // asks for the rest only; answered as a whole 200
/// request.retries = .withoutRedownloading        // on a costly link
/// let response = try await transport.response(to: request)
/// ```
public struct DownloadRequest: Sendable {
    /// The image's URL.
    public var url: ImageURL
    /// Extra request header fields (conditional, content negotiation, `Save-Data`…); a field
    /// holding a line break is not sent. `Range` and `If-Range` are the transport's when
    /// `resuming` is set.
    public var headers: [(name: String, value: String)]
    /// The priority, read again each time the transport chooses what to start.
    public var priority: RequestPriority
    /// Receives the body while it arrives, as the whole body so far (held bytes included), and
    /// what arrived when an attempt stops early.
    public var checkpoints: BodyCheckpoints?
    /// Bytes of this image already held (a partial body kept by an earlier load): the transport
    /// asks for the rest with `Range` and `If-Range`, and answers with the whole image as a `200`
    /// when the server's `206` is the rest of the same version (`RangeResumption`), or with the
    /// whole body it sent instead. `DownloadResponse.resumedBytes` says how many bytes of the
    /// answer were held.
    public var resuming: PartialBody?
    /// Which retries this request may make (the transport's `RetryPolicy` bounds them all).
    public var retries: RetryScope

    /// A request for `url`; see the properties for each default.
    public init(url: ImageURL, headers: [(name: String, value: String)] = [], priority: RequestPriority = RequestPriority(),
                checkpoints: BodyCheckpoints? = nil, resuming: PartialBody? = nil, retries: RetryScope = .asConfigured) {
        self.url = url
        self.headers = headers
        self.priority = priority
        self.checkpoints = checkpoints
        self.resuming = resuming
        self.retries = retries
    }
}
