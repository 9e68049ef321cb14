/// Summary figures of a set of durations in milliseconds (nearest-rank percentiles: the p-th
/// percentile is the smallest value with at least p % of the values at or below it).
package struct Percentiles: Sendable, Equatable {
    package var count: Int
    package var p50: Double
    package var p95: Double
    package var max: Double

    /// The figures of `values`; all zero when there are none.
    package init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        p50 = Self.rank(50, in: sorted)
        p95 = Self.rank(95, in: sorted)
        max = sorted.last ?? 0
    }

    /// The nearest-rank `percent` percentile of `sorted` (ascending); 0 when it is empty.
    package static func rank(_ percent: Int, in sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let position = (percent * sorted.count + 99) / 100   // ceil(p/100 × n)
        return sorted[Swift.max(1, Swift.min(sorted.count, position)) - 1]
    }
}
