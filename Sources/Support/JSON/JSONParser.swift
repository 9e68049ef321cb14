/// A strict JSON parser (RFC 8259) that records line numbers and refuses input that could hurt
/// the process: invalid UTF-8, nesting deeper than `maximumDepth`, trailing garbage.
///
/// It exists so that every error in an item, policy or settings file can name its line
/// (`x.json: line 3: expected a string`), which Foundation's decoders cannot.
package struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted. Item, policy and settings files need
    /// fewer than ten levels; the limit keeps hostile input from exhausting the stack.
    package var maximumDepth: Int

    /// Creates a parser.
    package init(maximumDepth: Int = 64) {
        self.maximumDepth = maximumDepth
    }

    /// A syntax error: the line it was found on and what is wrong.
    package struct SyntaxError: Error, Sendable, Equatable {
        /// The 1-based line where parsing stopped.
        public var line: Int
        /// What is wrong, in words.
        public var message: String

        /// Creates an error.
        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    /// Parses one JSON document from `bytes`.
    package func parse(_ bytes: some Collection<UInt8>) throws(SyntaxError) -> JSONValue {
        let array = Array(bytes)
        var cursor = Cursor(bytes: array, maximumDepth: maximumDepth)
        return try cursor.document()
    }

    /// Parses one JSON document from `text`.
    package func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

private struct Cursor {
    package let bytes: [UInt8]
    package let maximumDepth: Int
    package var index = 0
    package var line = 1
    package var depth = 0

    package init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    package func fail(_ message: String) -> JSONParser.SyntaxError {
        JSONParser.SyntaxError(line: line, message: message)
    }

    package mutating func document() throws(JSONParser.SyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace()
        guard index < bytes.count else {
            throw fail(bytes.isEmpty ? "the file is empty" : "no JSON value, only white space")
        }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else {
            throw fail("unexpected \(describe(bytes[index])) after the end of the JSON value")
        }
        return value
    }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A: index += 1; line += 1
            default: return
            }
        }
    }

    package func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    package mutating func parseValue() throws(JSONParser.SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input, expected a value") }
        let startLine = line
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return JSONValue(.string(try parseString()), line: startLine)
        case UInt8(ascii: "t"): try literal("true"); return JSONValue(.bool(true), line: startLine)
        case UInt8(ascii: "f"): try literal("false"); return JSONValue(.bool(false), line: startLine)
        case UInt8(ascii: "n"): try literal("null"); return JSONValue(.null, line: startLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONValue(.number(try parseNumber()), line: startLine)
        default:
            throw fail("unexpected \(describe(bytes[index])), expected a value")
        }
    }

    package mutating func literal(_ word: String) throws(JSONParser.SyntaxError) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count,
              bytes[index..<index + expected.count].elementsEqual(expected) else {
            throw fail("invalid literal, expected \(word)")
        }
        index += expected.count
    }

    package mutating func enter() throws(JSONParser.SyntaxError) {
        depth += 1
        if depth > maximumDepth { throw fail("nesting deeper than \(maximumDepth) levels") }
    }

    package mutating func parseObject() throws(JSONParser.SyntaxError) -> JSONValue {
        let startLine = line
        try enter()
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // The keys so far, for duplicates: a set once the object is large; before, a scan of the
        // members (no hashing nor set for the small objects policies and items are made of).
        var seen: Set<String>?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return JSONValue(.object(members), line: startLine)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describe(bytes[index])), expected a key in double quotes")
            }
            let key = try parseString()
            if seen == nil, members.count >= 16 { seen = Set(members.map(\.key)) }
            let duplicate = seen != nil ? seen?.insert(key).inserted == false : members.contains { $0.key == key }
            guard !duplicate else { throw fail("duplicate key \(JSONWriter.quoted(key))") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after the key \(JSONWriter.quoted(key))")
            }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw fail("unexpected \(describe(bytes[index])), expected ',' or '}'")
        }
        depth -= 1
        return JSONValue(.object(members), line: startLine)
    }

    package mutating func parseArray() throws(JSONParser.SyntaxError) -> JSONValue {
        let startLine = line
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return JSONValue(.array(elements), line: startLine)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw fail("unexpected \(describe(bytes[index])), expected ',' or ']'")
        }
        depth -= 1
        return JSONValue(.array(elements), line: startLine)
    }

    package mutating func parseNumber() throws(JSONParser.SyntaxError) -> String {
        let start = index
        func digits(_ cursor: inout Cursor) -> Int {
            let from = cursor.index
            while cursor.index < cursor.bytes.count, (0x30...0x39).contains(cursor.bytes[cursor.index]) {
                cursor.index += 1
            }
            return cursor.index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                throw fail("invalid number: leading zero")
            }
        } else {
            _ = digits(&self)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw fail("invalid number: no digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits(&self) > 0 else { throw fail("invalid number: no digit in the exponent") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    package mutating func parseString() throws(JSONParser.SyntaxError) -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = index
        // Whether a backslash was seen: without one (most strings) the text is the one run.
        var escaped = false
        func validated(_ cursor: Cursor, upTo end: Int) throws(JSONParser.SyntaxError) -> String {
            let text = cursor.bytes.withUnsafeBufferPointer { all -> String? in
                let run = UnsafeBufferPointer(rebasing: all[runStart..<end])
                // ASCII is valid UTF-8: decoded without `String(validating:)`, whose generic
                // validation costs about a thousand instructions a string (docs/startup.md).
                if run.allSatisfy({ $0 < 0x80 }) { return String(decoding: run, as: UTF8.self) }
                return String(validating: run, as: UTF8.self)
            }
            guard let text else { throw cursor.fail("a string is not valid UTF-8") }
            return text
        }
        func flush(_ cursor: Cursor, upTo end: Int, into scalars: inout String.UnicodeScalarView) throws(JSONParser.SyntaxError) {
            guard runStart < end else { return }
            scalars.append(contentsOf: try validated(cursor, upTo: end).unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw fail("unexpected end of input inside a string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\""), !escaped {
                let text = try validated(self, upTo: index)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\"") {
                try flush(self, upTo: index, into: &scalars)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 {
                throw fail(byte == 0x0A ? "a string is not closed before the end of the line" : "control character \(describe(byte)) inside a string")
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                try flush(self, upTo: index, into: &scalars)
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input inside a string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired surrogate in a \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw fail("unpaired surrogate in a \\u escape")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    throw fail(escape >= 0x21 && escape < 0x7F ? "invalid escape \\\(Character(Unicode.Scalar(escape))) in a string"
                                                            : "invalid escape: a backslash followed by \(describe(escape)) in a string")
                }
                runStart = index
                continue
            }
            index += 1
        }
    }

    package mutating func hex4() throws(JSONParser.SyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("unexpected end of input in a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid hex digit in a \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
