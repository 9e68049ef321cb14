import Transport
import Caching
import Accounting
import HTTPSemantics
/// What the pipeline's background revalidations of stale disk entries did (see `HTTPOptions`).
public struct RevalidationStatistics: Sendable, Hashable {
    /// Revalidations started.
    public var started = 0
    /// Answered `304 Not Modified`: the stored bytes kept, their freshness renewed.
    public var notModified = 0
    /// Answered with a new body, which replaced the stored one.
    public var replaced = 0
    /// Failed (the stale bytes stay).
    public var failed = 0

    /// All zero.
    public init() {}

    /// Revalidations that have ended.
    public var ended: Int { notModified + replaced + failed }
}
