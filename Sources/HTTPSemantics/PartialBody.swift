/// The first bytes of a body whose transfer was cancelled or failed, kept in the cache folder so
/// that the next request asks only for the rest.
///
/// ```swift
/// if let partial = disk.partial(for: url) {
///     request.headers += partial.resumeHeaders   // Range: bytes=65536-, If-Range: "v1"
/// }
/// // 206 (Content-Range: bytes 65536-…/total): disk.completePartial(for: url, rest: body, freshness: …)
/// // 200: the server sent the whole body again: disk.discardPartial(for: url), then store it.
/// ```
public struct PartialBody: Sendable, Equatable {
    /// The body's first bytes, each checked (a torn end is never here).
    public var bytes: [UInt8]
    /// The validator the bytes belong to, for `If-Range`: a strong `ETag` (quoted, as received),
    /// else a `Last-Modified` date.
    public var validator: String
    /// The whole body's length.
    public var totalLength: Int

    /// A partial body.
    public init(bytes: [UInt8], validator: String, totalLength: Int) {
        self.bytes = bytes
        self.validator = validator
        self.totalLength = totalLength
    }

    /// Where the rest starts: `bytes.count`.
    public var offset: Int { bytes.count }

    /// `Range: bytes=<offset>-` and `If-Range: <validator>` (RFC 9110 §14.2, §13.1.5): a server
    /// whose representation still matches answers 206 with the rest, else 200 with all of it.
    public var resumeHeaders: [(name: String, value: String)] {
        [("Range", "bytes=\(offset)-"), ("If-Range", validator)]
    }
}
