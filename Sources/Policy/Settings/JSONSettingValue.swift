import Support

/// A setting value that is none of a boolean, a number or a string (null, an array, an object),
/// kept as the settings file holds it: a settings file rewritten by `FileSettingsStore` keeps it,
/// and a typed read of it is a type error.
///
/// ```swift
/// if case .json(let other) = value { print(other.text) }   // [1,2]
/// ```
public struct JSONSettingValue: Sendable, Hashable, CustomStringConvertible {
    /// The value as the file holds it.
    package let value: JSONValue

    /// Wraps `value`.
    package init(_ value: JSONValue) {
        self.value = value
    }

    /// The value as compact JSON text: `null`, `[1,2]`, `{"a":true}`.
    public var text: String { JSONWriter.compactText(of: value) }

    /// `text`.
    public var description: String { text }

    /// The name of its type for messages: `null`, `an array`, `an object`.
    public var typeDescription: String { value.typeDescription }
}
