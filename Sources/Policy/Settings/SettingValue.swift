import Support
/// A value in a settings store.
public enum SettingValue: Sendable, Hashable, CustomStringConvertible {
    /// `true` / `false`.
    case bool(Bool)
    /// A whole number.
    case integer(Int)
    /// A number with a fraction.
    case double(Double)
    /// Text.
    case string(String)
    /// Anything else a settings file holds (null, an array, an object). Kept as it is; a typed read
    /// of it is a type error.
    case json(JSONSettingValue)

    /// The value as JSON text: `true`, `3`, `"text"`.
    public var description: String {
        JSONWriter.compactText(of: jsonValue)
    }

    /// The name of its type for messages: `a boolean`, `a string ("yes")`.
    public var typeDescription: String {
        switch self {
        case .bool: return "a boolean"
        case .integer, .double: return "a number (\(description))"
        case .string: return "a string (\(description))"
        case .json(let value): return value.typeDescription
        }
    }

    /// Parses what a user typed (`true`, `false`, `3`, `0.5`, anything else is a string).
    public init(parsing text: String) {
        switch text {
        case "true": self = .bool(true)
        case "false": self = .bool(false)
        default:
            if let integer = Int(text) { self = .integer(integer) }
            else if let double = Double(text), double.isFinite, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                self = .double(double)
            } else { self = .string(text) }
        }
    }

    /// Reads the words people use for a boolean: true/false, yes/no, on/off, 1/0 (any case).
    public static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }

    var jsonValue: JSONValue {
        switch self {
        case .bool(let flag): return JSONValue(.bool(flag))
        case .integer(let number): return JSONValue(.number(String(number)))
        case .double(let number): return JSONValue(.number(number.isFinite ? "\(number)" : "null"))
        case .string(let text): return JSONValue(.string(text))
        case .json(let other): return other.value
        }
    }

    init(_ value: JSONValue) {
        switch value.kind {
        case .bool(let flag): self = .bool(flag)
        case .string(let text): self = .string(text)
        case .number(let text):
            if let integer = Int(text) { self = .integer(integer) }
            else if let double = Double(text), double.isFinite { self = .double(double) }
            else { self = .json(JSONSettingValue(value)) }
        default: self = .json(JSONSettingValue(value))
        }
    }
}
