import Transport
import Caching
import Accounting
import HTTPSemantics
import Support
/// Downloads the pipeline completed by resuming a partial body (`Range` answered by 206).
public struct ResumeStatistics: Sendable, Hashable {
    /// Downloads completed from a partial body.
    public var resumed = 0
    /// Bytes kept from earlier transfers, not downloaded again.
    public var savedBytes = 0

    /// All zero.
    public init() {}

    mutating func add(savedBytes bytes: Int) {
        resumed += 1
        savedBytes += bytes
    }
}
