#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// The exit statuses of `imgpolicy` (from BSD's sysexits.h), as documented in README.md.
enum ExitStatus: Int32 {
    case success = 0
    /// A looked-up value does not exist (`settings get` of an unset key).
    case notSet = 1
    /// Wrong flag, value or name on the command line.
    case usage = 64
    /// A file's content is wrong: item, policy or settings.
    case dataError = 65
    /// A file does not exist or cannot be read.
    case noInput = 66
    /// A download failed: the server or the network.
    case unavailable = 69
    /// A file could not be written.
    case ioError = 74
}

/// A failure to report in one line on standard error, with its exit status.
struct CommandFailure: Error {
    var message: String
    var status: ExitStatus

    init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// The status that matches a file error.
    init(_ error: DataFileError) {
        let status: ExitStatus
        switch error.code {
        case _ where [EMFILE, ENFILE, ENOMEM].contains(error.systemErrno ?? 0):
            status = .ioError   // the process ran short (docs: too few file descriptors), not the file
        case .notFound, .unreadable: status = .noInput
        case .malformed, .invalid, .wrongType: status = .dataError
        default: status = .ioError   // .writeFailed, and any code added later: the file's I/O
        }
        self.init(error.description, status: status)
    }

    /// A usage error.
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message, status: .usage)
    }

    /// Prints the message (unless it is empty: already reported) as one line with its control
    /// characters escaped, and exits with the status.
    func exit() -> Never {
        guard !message.isEmpty else { exitProcess(status.rawValue) }
        // Messages quote file contents, names and arguments: escaped, so that they stay one line.
        let line = "imgpolicy: " + TerminalText.escaped(message) + "\n"
        FileHandle.standardError.write(text: line)
        exitProcess(status.rawValue)
    }
}

/// Runs `body`, turning a file error into a `CommandFailure`.
func reporting<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as DataFileError {
        throw CommandFailure(error)
    }
}
