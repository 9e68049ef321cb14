import HTTPSemantics
/// Reports the body of a transfer while it arrives, so that a caller can keep what came (a
/// resumable partial body) even if the process dies before the transfer ends.
///
/// `handler` is called on the transport thread each time the body has grown by `every` bytes,
/// and once more with everything received when the transfer is cancelled or fails after some
/// body arrived (before its caller learns of the failure). It must return at once (submit any
/// disk work to a thread of its own) and must not call the transport.
///
/// ```swift
/// let checkpoints = BodyCheckpoints(every: 64 << 10) { partial in
///     diskThread.submit { _ = try? disk.savePartial(partial.body, for: url, validator: v, totalLength: n) }
/// }
/// ```
public struct BodyCheckpoints: Sendable {
    /// What has arrived so far.
    public struct Partial: Sendable {
        /// The response's status (200, or 206 for the rest of a body).
        public var status: Int
        /// The response header fields.
        public var headers: [(name: String, value: String)]
        /// The body received so far.
        public var body: [UInt8]
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
