/// Writes `JSONValue`s as text: objects keep their member order, two-space indentation, a final
/// newline. Numbers are written as they were read.
package enum JSONWriter {
    /// The pretty-printed text of `value`, ending with a newline.
    package static func text(of value: JSONValue) -> String {
        var out = ""
        write(value, indent: "", into: &out)
        out.append("\n")
        return out
    }

    /// The compact, one-line text of `value`.
    package static func compactText(of value: JSONValue) -> String {
        var out = ""
        write(value, indent: nil, into: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: String?, into out: inout String) {
        switch value.kind {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): writeString(text, into: &out)
        case .array(let elements):
            guard !elements.isEmpty else { out += "[]"; return }
            out += "["
            let inner = indent.map { $0 + "  " }
            for (position, element) in elements.enumerated() {
                if position > 0 { out += "," }
                if let inner { out += "\n" + inner }
                write(element, indent: inner, into: &out)
            }
            if let indent { out += "\n" + indent }
            out += "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            let inner = indent.map { $0 + "  " }
            for (position, member) in members.enumerated() {
                if position > 0 { out += "," }
                if let inner { out += "\n" + inner }
                writeString(member.key, into: &out)
                out += indent == nil ? ":" : ": "
                write(member.value, indent: inner, into: &out)
            }
            if let indent { out += "\n" + indent }
            out += "}"
        }
    }

    /// `text` as a JSON string literal, for messages that quote a key or value read from a file:
    /// control characters come out escaped (`"\u001b[2J"`), so the message stays on one line and
    /// sends nothing raw to a terminal.
    package static func quoted(_ text: String) -> String {
        var out = ""
        writeString(text, into: &out)
        return out
    }

    /// Appends `text` as a JSON string literal; every control character (C0, DEL, C1) and the
    /// line separators U+2028/U+2029 are escaped.
    package static func writeString(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
