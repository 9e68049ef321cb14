/// Finding a run of bytes in bytes (an HTTP head's end, `\r\n\r\n`, in what a socket delivered):
/// the package's one byte search, so that no module writes its own loop again.
///
/// ```swift
/// let buffer: [UInt8] = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nrest".utf8)
/// buffer.firstRange(ofBytes: [13, 10, 13, 10])   // 23..<27
/// ```
extension Collection where Element == UInt8 {
    /// The range of the first occurrence of `needle` in these bytes, in this collection's own
    /// indices (a slice's start is its offset in its base), or nil when it does not occur. An
    /// empty `needle` occurs at the start: `startIndex..<startIndex`, as the standard library's
    /// `firstRange(of:)` answers.
    ///
    /// Linear in the bytes compared: each candidate start is the next byte equal to the needle's
    /// first, then compared to the needle's length at most. Any bytes at all: it never traps.
    package func firstRange(ofBytes needle: some Collection<UInt8>) -> Range<Index>? {
        guard let first = needle.first else { return startIndex..<startIndex }
        let length = needle.count
        var remaining = count
        var start = startIndex
        while remaining >= length {
            if self[start] == first {
                let end = index(start, offsetBy: length)
                if self[start..<end].elementsEqual(needle) { return start..<end }
            }
            formIndex(after: &start)
            remaining -= 1
        }
        return nil
    }
}
