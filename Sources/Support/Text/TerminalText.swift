/// Text made safe to print on a terminal: bytes from the network (a `Content-Type`), from input
/// files (an item's id, a policy's rule names and reasons, settings keys and values) or from a
/// user's arguments can hold escape sequences that retitle the window, clear the screen or hide
/// text. Every text line the command prints goes through `escaped(_:)`; JSON output does not need
/// it (`JSONWriter` already writes every control character as `\u00XX`).
///
/// Escaped: the C0 controls (U+0000–U+001F, including newline and tab, so that each item stays
/// on one line), DEL (U+007F), the C1 controls (U+0080–U+009F, which some terminals read as CSI
/// or OSC), the line and paragraph separators (U+2028, U+2029), which break a line as a newline
/// does, and every bidirectional control: the marks (U+200E, U+200F, U+061C), embeddings,
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what is shown. Each is
/// written as Swift writes it, `\u{1B}`; everything else, including a backslash, is kept as it is.
///
/// ```swift
/// TerminalText.escaped("text/html\u{1B}]0;pwned\u{07}")   // "text/html\u{1B}]0;pwned\u{7}" as plain characters
/// ```
package enum TerminalText {
    /// `text` with every control character escaped, newlines included: the result is one line.
    package static func escaped(_ text: String) -> String {
        escaped(text, keepingLayout: false)
    }

    /// `text` with every control character escaped except `\n` and `\t`: for output of several
    /// lines or columns whose parts were escaped already or are the command's own.
    package static func escapedKeepingLayout(_ text: String) -> String {
        escaped(text, keepingLayout: true)
    }

    /// Whether `scalar` must not reach a terminal as it is.
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func escaped(_ text: String, keepingLayout: Bool) -> String {
        let kept: (Unicode.Scalar) -> Bool = { keepingLayout && ($0 == "\n" || $0 == "\t") }
        guard text.unicodeScalars.contains(where: { needsEscaping($0) && !kept($0) }) else {
            return text
        }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if needsEscaping(scalar) && !kept(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
