/// Reports the body of a transfer while it arrives, so that a caller can keep what came (a
/// resumable partial body) even if the process dies before the transfer ends.
///
/// `handler` is called on the transport thread each time the body has grown by `every` bytes,
/// and once more with what came since when the transfer is cancelled or fails after some body
/// arrived (before its caller learns of the failure). Each report carries only the bytes that
/// arrived since the one before (`bytes`, starting at `offset` in the whole body), so that a body
/// of n bytes costs O(n) to report and keep, not O(n²). It must return at once (submit any disk
/// work to a thread of its own, in order) and must not call the transport.
///
/// ```swift
/// let checkpoints = BodyCheckpoints(every: 64 << 10) { partial in
///     diskThread.submit {
///         if partial.offset == 0 { _ = try? disk.savePartial(partial.bytes, for: url, validator: v, totalLength: n) }
///         else { _ = try? disk.appendPartial(partial.bytes, for: url, at: partial.offset) }
///     }
/// }
/// ```
public struct BodyCheckpoints: Sendable {
    /// What has arrived so far.
    public struct Partial: Sendable {
        /// The response's status (200, or 206 for the rest of a body).
        public var status: Int
        /// The response header fields.
        public var headers: [(name: String, value: String)]
        /// The bytes that arrived since the previous report (all of them in the first).
        public var bytes: [UInt8]
        /// Where `bytes` start in the whole body: the length reported before (0 for the first
        /// report; for a body combined with held bytes, the held bytes count as reported).
        public var offset: Int
        /// The body's length so far: `offset + bytes.count`.
        public var length: Int { offset + bytes.count }
        /// Whether the transfer ended (cancelled or failed): the last report.
        public var isFinal: Bool
    }

    /// Bytes between two reports (at least 1).
    public var every: Int
    /// Receives the reports.
    public var handler: @Sendable (Partial) -> Void

    /// Reports every `every` bytes to `handler`.
    public init(every: Int, handler: @escaping @Sendable (Partial) -> Void) {
        self.every = max(1, every)
        self.handler = handler
    }
}
