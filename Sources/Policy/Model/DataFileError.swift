import Support
/// An error in a file the SDK reads or writes (an item file, a policy, a settings file), with
/// enough context for a one-line message that tells the user what to fix:
/// `x.json: line 3: "original" must be a string`.
///
/// ## See Also
///
/// - <doc:WritingAPolicy>
/// - <doc:TheCommand>
public struct DataFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in broad strokes; callers pick an exit status from it.
    public enum Code: Sendable, Equatable {
        /// The file does not exist.
        case notFound
        /// The file exists but could not be read (permissions, a directory, an I/O error).
        case unreadable
        /// The file is not valid JSON, or not valid UTF-8.
        case malformed
        /// The JSON is well formed but its content is wrong (a missing key, a bad value).
        case invalid
        /// A stored value has another type than the one asked for (a string read as a boolean).
        case wrongType
        /// Writing the file failed; the previous content is untouched.
        case writeFailed
    }

    /// The broad kind of failure.
    public var code: Code
    /// The file's path as the user gave it, or a name such as `<stdin>`.
    public var source: String
    /// The 1-based line of the offending value, when known.
    public var line: Int?
    /// Where in the file's structure, e.g. `rule 3 ("wifi")`; nil when the line says enough.
    public var context: String?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, source: String, line: Int? = nil, context: String? = nil, message: String) {
        self.code = code
        self.source = source
        self.line = line.flatMap { $0 > 0 ? $0 : nil }
        self.context = context
        self.message = message
    }

    /// The one-line message: `source: line N: context: message`.
    public var description: String {
        var parts = [source]
        if let line { parts.append("line \(line)") }
        if let context { parts.append(context) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}

extension DataFileError {
    /// A file that could not be written, from the support floor's failure: the path and message kept.
    package init(writing failure: SystemError) {
        self.init(.writeFailed, source: failure.path, message: failure.message)
    }
}
