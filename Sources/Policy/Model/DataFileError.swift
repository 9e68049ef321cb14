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
    /// What went wrong, in broad strokes; callers pick an exit status from it. A struct over a
    /// private code, so that a new code never breaks a caller's `switch`: compare with the static
    /// members (`error.code == .notFound`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case notFound, unreadable, malformed, invalid, wrongType, writeFailed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The file does not exist.
        public static let notFound = Code(.notFound)
        /// The file exists but could not be read (permissions, a directory, an I/O error).
        public static let unreadable = Code(.unreadable)
        /// The file is not valid JSON, or not valid UTF-8.
        public static let malformed = Code(.malformed)
        /// The JSON is well formed but its content is wrong (a missing key, a bad value).
        public static let invalid = Code(.invalid)
        /// A stored value has another type than the one asked for (a string read as a boolean).
        public static let wrongType = Code(.wrongType)
        /// Writing the file failed; the previous content is untouched.
        public static let writeFailed = Code(.writeFailed)

        /// The code's name, as the static member is spelled.
        public var description: String { value.rawValue }
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
    /// The system's error number, when a system call failed (a read or a write).
    public var systemErrno: Int32?

    /// Creates an error.
    public init(_ code: Code, source: String, line: Int? = nil, context: String? = nil, message: String,
                systemErrno: Int32? = nil) {
        self.code = code
        self.systemErrno = systemErrno
        self.source = source
        self.line = line.flatMap { $0 > 0 ? $0 : nil }
        self.context = context
        self.message = message
    }

    /// Whether `lhs` and `rhs` say the same thing of the same file: code, source, line, context
    /// and message (`systemErrno` is a detail of the message, not compared).
    public static func == (lhs: DataFileError, rhs: DataFileError) -> Bool {
        lhs.code == rhs.code && lhs.source == rhs.source && lhs.line == rhs.line && lhs.context == rhs.context
            && lhs.message == rhs.message
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
        self.init(.writeFailed, source: failure.path, message: failure.message, systemErrno: failure.errno == 0 ? nil : failure.errno)
    }
}
