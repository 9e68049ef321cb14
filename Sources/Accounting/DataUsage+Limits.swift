import Policy
import HTTPSemantics
import Support

/// The bound every count of a usage record, and every total of a day and of a whole ledger, stays
/// within: the ledger's files are untrusted, and a value no real usage reaches is refused with
/// the file, line and key, never summed into a figure that saturates in silence.
extension DataUsage {
    /// The largest count (bytes, transfers, originals, retries) a usage record holds, and the
    /// largest total of a day or of a ledger: 2^53 − 1 = 9,007,199,254,740,991, the largest
    /// whole number every JSON reader holds exactly (a double), and about 9 PB: more than any
    /// device downloads. Sums of values within it never overflow an `Int`.
    public static let maximumCount = 9_007_199_254_740_991

    /// The sums over every key of a usage: all bytes and all transfers (every link, variant and
    /// source), originals not downloaded, retries, resumed bytes and bytes of failed attempts. Every figure `stats` prints
    /// is a part of one of these, so when they are at most `maximumCount`, so is every figure.
    struct Totals: Equatable {
        var bytes = 0, transfers = 0, originalsNotDownloaded = 0, retries = 0, resumedBytes = 0, failedBytes = 0

        /// The totals as (name, value), the names as the ledger's keys say them.
        var named: [(name: String, value: Int)] {
            [("\"bytes\" of all loads", bytes), ("\"transfers\" of all loads", transfers),
             ("\"originalsNotDownloaded\"", originalsNotDownloaded), ("\"retries\"", retries), ("\"resumedBytes\"", resumedBytes),
             ("\"failedBytes\"", failedBytes)]
        }

        /// The sum, saturating at `Int.max` (checked against `maximumCount` afterwards).
        static func + (lhs: Totals, rhs: Totals) -> Totals {
            Totals(bytes: saturatingSum(lhs.bytes, rhs.bytes), transfers: saturatingSum(lhs.transfers, rhs.transfers),
                   originalsNotDownloaded: saturatingSum(lhs.originalsNotDownloaded, rhs.originalsNotDownloaded),
                   retries: saturatingSum(lhs.retries, rhs.retries), resumedBytes: saturatingSum(lhs.resumedBytes, rhs.resumedBytes),
                   failedBytes: saturatingSum(lhs.failedBytes, rhs.failedBytes))
        }

        /// The name of the first total above `maximumCount`, or nil when all are within it.
        var firstBeyondMaximum: String? {
            named.first { $0.value > DataUsage.maximumCount }?.name
        }
    }

    /// This usage's totals.
    var totals: Totals {
        let all = amount { _ in true }
        return Totals(bytes: all.bytes, transfers: all.transfers, originalsNotDownloaded: originalsNotDownloaded(),
                      retries: retries(), resumedBytes: resumedBytes(), failedBytes: failedBytes())
    }

    /// The estimate of `estimatedSavedBytes(perOriginal:on:)`, or nil when it would be more than
    /// `maximumCount` (the counts it multiplies are then no real usage): never a saturated figure.
    public func savedBytesEstimate(perOriginal: Int, on include: (Link) -> Bool = { _ in true }) -> Int? {
        let (product, overflow) = originalsNotDownloaded(on: include).multipliedReportingOverflow(by: max(0, perOriginal))
        return overflow || product > Self.maximumCount ? nil : product
    }
}
