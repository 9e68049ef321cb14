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

    /// Whether `bytes` are valid UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF),
    /// checked by hand: a plain loop, nothing generic to look up at start-up.
    package static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int, low: UInt8, high: UInt8
            switch lead {
            case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
            case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
            case 0xED: (length, low, high) = (3, 0x80, 0x9F)
            case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
            case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
            case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
            default: return false
            }
            guard index + length <= count, (low...high).contains(bytes[index + 1]) else { return false }
            for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
            index += length
        }
        return true
    }

    /// Whether `bytes` are valid UTF-8 (the same check, for any collection of bytes).
    package static func isUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        Array(bytes).withUnsafeBufferPointer { isUTF8($0) }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
