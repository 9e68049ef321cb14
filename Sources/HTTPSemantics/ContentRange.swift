import Support
/// A `Content-Range: bytes first-last/complete` value (RFC 9110 §14.4), parsed without trusting
/// it: nil for anything else (`*`, unknown length, overflow, last before first).
package struct ContentRange: Equatable {
    package var first: Int
    package var last: Int
    package var complete: Int

    package init(first: Int, last: Int, complete: Int) {
        (self.first, self.last, self.complete) = (first, last, complete)
    }

    package init?(_ value: String) {
        let text = value.filter { $0 != " " && $0 != "\t" }
        guard text.lowercased().hasPrefix("bytes") else { return nil }
        let spec = text.dropFirst(5)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let complete = Self.number(halves[1]) else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
              first <= last, last < complete else { return nil }
        self.init(first: first, last: last, complete: complete)
    }

    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
