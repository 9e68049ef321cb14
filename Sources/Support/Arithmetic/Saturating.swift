/// Arithmetic that stops at the bounds instead of trapping: counts and times read from files and
/// servers are untrusted, and a sum of them must never stop the process.
///
/// ```swift
/// total = Saturating.add(total, bytes)      // Int.max at most, never a trap
/// ```
package enum Saturating {
    /// `a + b`, or the bound it would pass.
    package static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// `a - b`, or the bound it would pass.
    package static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : difference
    }

    /// `a + b`, or the bound it would pass.
    package static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}

/// `Saturating.add(a, b)`.
package func saturatingSum(_ a: Int, _ b: Int) -> Int {
    Saturating.add(a, b)
}
