/// A parsed JSON value that remembers the line it started on, so that every error about it can
/// say where it is.
///
/// Numbers keep their source text, so that a value the project does not interpret (an unknown key
/// in a settings file, say) is written back exactly as it was read.
package struct JSONValue: Sendable, Hashable {
    /// The kinds of JSON value, with their contents. Not `indirect`: arrays and objects already
    /// hold their elements on the heap, and a box per value made loading a policy allocate and free
    /// one more block per value (docs/startup.md).
    package enum Kind: Sendable, Hashable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A number, as written in the source.
        case number(String)
        /// A string.
        case string(String)
        /// An array.
        case array([JSONValue])
        /// An object, with its members in source order.
        case object([(key: String, value: JSONValue)])

        /// Kinds are equal when their contents are; object members compare in order.
        public static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): return true
            case let (.bool(a), .bool(b)): return a == b
            case let (.number(a), .number(b)): return a == b
            case let (.string(a), .string(b)): return a == b
            case let (.array(a), .array(b)): return a == b
            case let (.object(a), .object(b)):
                return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }

        /// Hashes the contents.
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .null: hasher.combine(0)
            case .bool(let b): hasher.combine(b)
            case .number(let n): hasher.combine(n)
            case .string(let s): hasher.combine(s)
            case .array(let a): hasher.combine(a)
            case .object(let members):
                for member in members {
                    hasher.combine(member.key)
                    hasher.combine(member.value)
                }
            }
        }
    }

    /// What the value is.
    package var kind: Kind
    /// The 1-based line of the source where the value starts; 0 for a value built in code.
    package var line: Int

    /// Creates a value; `line` 0 means it was not read from a file.
    package init(_ kind: Kind, line: Int = 0) {
        self.kind = kind
        self.line = line
    }

    /// Values are equal when their contents are; where they were read from does not count.
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the contents, not the line.
    package func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The name of the value's JSON type, for error messages ("a string", "an object").
    package var typeDescription: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
