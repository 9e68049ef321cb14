/// File names as the kernel stores them, bytes that need not be UTF-8 (`n\xFF.json`), made safe
/// to show: a Swift `String` cannot hold such a name (decoding repairs each bad byte as U+FFFD,
/// which names another file), so code that meets one shows it with `displayed(_:)` and refuses
/// to act on a repaired copy.
///
/// ```swift
/// PathBytes.displayed(Array("n".utf8) + [0xFF] + Array(".json".utf8))   // "n\xFF.json" (a backslash, x, F, F)
/// ```
package enum PathBytes {
    /// `bytes` as text: valid UTF-8 kept as it is, each byte that is not part of valid UTF-8
    /// written `\xHH` (two upper-case hex digits). Control characters are left to `TerminalText`.
    package static func displayed(_ bytes: some Collection<UInt8>) -> String {
        let all = Array(bytes)
        var text = ""
        var index = 0
        while index < all.count {
            let lead = all[index]
            let length = lead < 0x80 ? 1 : (0xC2...0xDF).contains(lead) ? 2 : (0xE0...0xEF).contains(lead) ? 3 : (0xF0...0xF4).contains(lead) ? 4 : 0
            if length > 0, index + length <= all.count, let sequence = String(validating: all[index..<index + length], as: UTF8.self) {
                text += sequence
                index += length
            } else {
                text += "\\x" + hex(lead)
                index += 1
            }
        }
        return text
    }

    /// Whether `bytes` are valid UTF-8.
    package static func isUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
