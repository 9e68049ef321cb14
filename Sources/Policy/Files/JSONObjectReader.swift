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
