import Testing
import Support
import TestSupport

/// `firstRange(ofBytes:)` (Support's one byte search) against a naive reference.
struct ByteSearchTests {
    /// The reference: every start tried in order, the needle compared whole at each.
    private static func naiveFirstOffset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<start + needle.count]) == needle {
            return start
        }
        return nil
    }

    @Test(arguments: [
        (Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nrest".utf8), [13, 10, 13, 10], 23),
        ([1, 2, 3], [], 0),
        ([], [], 0),
        ([], [1], nil),
        ([1, 2], [1, 2, 3], nil),
        ([1, 1, 1, 2], [1, 1, 2], 1),
        ([13, 10, 13, 13, 10, 13, 10], [13, 10, 13, 10], 3),
    ] as [([UInt8], [UInt8], Int?)])
    func examples(_ haystack: [UInt8], _ needle: [UInt8], _ offset: Int?) {
        let range = haystack.firstRange(ofBytes: needle)
        #expect(range?.lowerBound == offset)
        if let range { #expect(range.count == needle.count) }
    }

    /// Random bytes of a small alphabet (so that near misses are common), the needle often cut
    /// from the haystack itself: the same answer as the reference, in an array, in a slice (whose
    /// indices are its base's) and in a collection that is not random-access. Seeded; the seed is
    /// printed.
    @Test func agreesWithANaiveSearch() {
        var random = SeededGenerator(seed: 0xB17E_5EA2, label: "byte search against a naive one")
        for _ in 0..<3000 {
            let haystack = (0..<Int.random(in: 0...48, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }
            var needle = (0..<Int.random(in: 0...5, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }
            if !haystack.isEmpty && Bool.random(using: &random) {
                let start = Int.random(in: 0..<haystack.count, using: &random)
                needle = Array(haystack[start..<min(haystack.count, start + Int.random(in: 1...6, using: &random))])
            }
            let expected = Self.naiveFirstOffset(of: needle, in: haystack)
            let found = haystack.firstRange(ofBytes: needle)
            #expect(found?.lowerBound == expected, "haystack \(haystack), needle \(needle)")
            #expect(found.map { $0.upperBound - $0.lowerBound } == expected.map { _ in needle.count })

            let cut = Int.random(in: 0...haystack.count, using: &random)
            let slice = haystack[cut...]
            let inSlice = Self.naiveFirstOffset(of: needle, in: Array(slice)).map { $0 + cut }
            #expect(slice.firstRange(ofBytes: needle)?.lowerBound == inSlice, "slice from \(cut) of \(haystack), needle \(needle)")

            let list = AnyCollectionOfBytes(haystack)
            let inList = list.firstRange(ofBytes: needle[...]).map { list.distance(from: list.startIndex, to: $0.lowerBound) }
            #expect(inList == expected, "not random-access: haystack \(haystack), needle \(needle)")
        }
    }
}

/// Bytes behind indices that are not integers and only move forward.
private struct AnyCollectionOfBytes: Collection {
    struct Index: Comparable {
        var position: Int
        static func < (lhs: Index, rhs: Index) -> Bool { lhs.position < rhs.position }
    }

    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var startIndex: Index { Index(position: 0) }
    var endIndex: Index { Index(position: bytes.count) }
    func index(after i: Index) -> Index { Index(position: i.position + 1) }
    subscript(position: Index) -> UInt8 { bytes[position.position] }
}
