import Support
/// `--latency MIN-MAX`: the server's delay before each response, in milliseconds, drawn per URL
/// from this range by the run's seeded generator.
package struct LatencyRange: Sendable, Equatable {
    package var minimum: Int
    package var maximum: Int

    /// The largest delay accepted: 10 s.
    package static let limit = 10_000

    /// Parses `20-80` (or `50`: always 50 ms); nil for anything else, a minimum above the maximum,
    /// or a value beyond `limit`.
    package init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        var values: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 6, part.allSatisfy({ ("0"..."9").contains($0) }),
                  let value = Int(part), value <= Self.limit else { return nil }
            values.append(value)
        }
        guard let low = values.first, let high = values.last, low <= high else { return nil }
        minimum = low
        maximum = high
    }

    package init(minimum: Int, maximum: Int) {
        self.minimum = minimum
        self.maximum = maximum
    }

    package var description: String { minimum == maximum ? "\(minimum) ms" : "\(minimum)–\(maximum) ms" }
}
