/// What a response's `Content-Length` fields say, all of them read.
package enum ContentLengthVerdict: Equatable {
    /// No `Content-Length`.
    case absent
    /// One length, however often repeated.
    case length(Int)
    /// Different lengths, or one that is not a number: the response is refused.
    case conflicting([String])

    /// The verdict on the values of every `Content-Length` field received.
    package init(_ values: [String]) {
        guard !values.isEmpty else {
            self = .absent
            return
        }
        var lengths: Set<Int> = []
        for member in values.prefix(100).flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = member.filter { $0 != " " && $0 != "\t" }
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(digits) else {
                self = .conflicting(values)
                return
            }
            lengths.insert(length)
        }
        guard lengths.count == 1, let length = lengths.first else {
            self = .conflicting(values)
            return
        }
        self = .length(length)
    }
}
