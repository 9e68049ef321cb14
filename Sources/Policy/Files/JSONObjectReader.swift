import Support
/// Reads the members of one JSON object with typed accessors that throw `DataFileError`s naming
/// the file, the line and the key, and rejects keys it was not asked about.
///
/// The keys an object may have are given up front; the first other key (usually a typo) is
/// reported before anything else, with the list of keys that are allowed.
struct JSONObjectReader {
    let source: String
    let context: String?
    let line: Int
    private let members: [(key: String, value: JSONValue)]

    init(_ value: JSONValue, source: String, context: String? = nil, what: String = "the value", keys: [String]) throws(DataFileError) {
        guard case .object(let members) = value.kind else {
            throw DataFileError(.invalid, source: source, line: value.line, context: context,
                                message: "expected \(what) to be an object, found \(value.typeDescription)")
        }
        self.source = source
        self.context = context
        self.line = value.line
        self.members = members
        if let extra = members.first(where: { !keys.contains($0.key) }) {
            throw error("unknown key \(JSONWriter.quoted(extra.key)) (expected \(quotedList(keys)))", at: extra.value)
        }
    }

    func error(_ message: String, at value: JSONValue? = nil) -> DataFileError {
        DataFileError(.invalid, source: source, line: value?.line ?? line, context: context, message: message)
    }

    func value(_ key: String) -> JSONValue? {
         members.first { $0.key == key }?.value
    }

    func string(_ key: String) throws(DataFileError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value.kind else {
            throw error("\"\(key)\" must be a string, found \(value.typeDescription)", at: value)
        }
        return text
    }

    func requiredString(_ key: String) throws(DataFileError) -> String {
        guard let text = try string(key) else { throw error("\"\(key)\" is missing") }
        return text
    }

    func bool(_ key: String) throws(DataFileError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value.kind else {
            throw error("\"\(key)\" must be true or false, found \(value.typeDescription)", at: value)
        }
        return flag
    }

    func array(_ key: String) throws(DataFileError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value.kind else {
            throw error("\"\(key)\" must be an array, found \(value.typeDescription)", at: value)
        }
        return elements
    }

    /// A whole number in `range` (`unit` names what it counts in messages), nil when absent.
    func wholeNumber(_ key: String, in range: ClosedRange<Int>, unit: String) throws(DataFileError) -> Int? {
        guard let value = value(key) else { return nil }
        return try wholeNumber(value, named: "\"\(key)\"", in: range, unit: unit)
    }

    /// `value` as a whole number in `range`; `name` says what it is in messages.
    func wholeNumber(_ value: JSONValue, named name: String, in range: ClosedRange<Int>, unit: String) throws(DataFileError) -> Int {
        guard case .number(let text) = value.kind else {
            throw error("\(name) must be a number of \(unit), found \(value.typeDescription)", at: value)
        }
        guard let number = Int(text), range.contains(number) else {
            let shown = text.count > 24 ? String(text.prefix(24)) + "…" : text
            throw error("\(name) must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound), found \(shown)", at: value)
        }
        return number
    }

    func object(_ key: String) throws(DataFileError) -> [(key: String, value: JSONValue)]? {
        guard let value = value(key) else { return nil }
        guard case .object(let members) = value.kind else {
            throw error("\"\(key)\" must be an object, found \(value.typeDescription)", at: value)
        }
        return members
    }
}

extension JSONParser {
    /// Parses `bytes` read from `source`, turning a syntax error into a `DataFileError`.
    func parse(_ bytes: some Collection<UInt8>, source: String) throws(DataFileError) -> JSONValue {
        do {
            return try parse(bytes)
        } catch {
            throw DataFileError(.malformed, source: source, line: error.line, message: error.message)
        }
    }
}
