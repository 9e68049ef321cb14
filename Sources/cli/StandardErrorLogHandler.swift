#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Support

/// The command's log backend: one line per message on standard error,
/// `imgpolicy: debug: message key=value …`, with every control character of the message and the
/// metadata escaped (`TerminalText`), so that a URL, a header or a path cannot break the line or
/// drive the terminal. Metadata keys are sorted, so lines are stable.
///
/// Thread-safe: a value type; each line is written with one `write(2)` call, so lines from
/// concurrent tasks never interleave within a line.
struct StandardErrorLogHandler: LogHandler {
    /// The least severe level written.
    var logLevel: Logger.Level
    /// Metadata added to every message.
    var metadata: Logger.Metadata = [:]
    /// Adds contextual metadata to every message (none by default).
    var metadataProvider: Logger.MetadataProvider?
    /// Where lines go: standard error, or a test's sink.
    private let write: @Sendable (String) -> Void

    /// A handler writing messages of `level` and above to standard error (or to `write`).
    init(level: Logger.Level, write: @escaping @Sendable (String) -> Void = StandardErrorLogHandler.writeToStandardError) {
        logLevel = level
        self.write = write
    }

    /// Writes the event as one line.
    func log(event: LogEvent) {
        write(Self.line(for: event, handlerMetadata: metadata, provider: metadataProvider))
    }

    /// The line for `event`, its trailing newline included.
    static func line(for event: LogEvent, handlerMetadata: Logger.Metadata, provider: Logger.MetadataProvider?) -> String {
        var merged = handlerMetadata
        if let provided = provider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var text = "imgpolicy: \(event.level): \(event.message)"
        if let error = event.error { text += " error=\(error)" }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        return TerminalText.escaped(text) + "\n"
    }

    /// Metadata of the handler.
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `line` to standard error in one call.
    @Sendable static func writeToStandardError(_ line: String) {
        FileHandle.standardError.write(Data(line.utf8))
    }
}
