import ArgumentParser
import Logging
import Support

/// `--verbose` and `$IMGPOLICY_LOG_LEVEL`: what the command logs to standard error.
///
/// By default nothing is logged: every failure is already reported as one line with its exit
/// status, and a log line would say it twice. `-v` logs at `info` and above, `-vv` at `debug`,
/// `-vvv` (or more) at `trace`; without `-v`, `IMGPOLICY_LOG_LEVEL` (trace, debug, info, notice,
/// warning, error, critical) sets the level. A value of the variable that is not a level is a
/// usage error (exit 64) naming the variable, whether or not `-v` is given.
struct LoggingOptions: ParsableArguments {
    /// The variable that sets the level when `--verbose` is not given.
    static let variable = "IMGPOLICY_LOG_LEVEL"

    /// `-v`, `--verbose`, counted, as every command that logs declares it.
    static var declaration: OptionDeclaration {
        .counted("verbose", short: "v",
                 help: "Log what the command does to standard error: -v info, -vv debug, -vvv trace (default: nothing, or $IMGPOLICY_LOG_LEVEL).")
    }

    @Flag(name: Self.declaration.argumentName, help: Self.declaration.argumentHelp)
    var verbose: Int

    /// The level to log at, or nil to log nothing.
    func level(environment: [String: String]) throws(CommandFailure) -> Logger.Level? {
        try Self.level(verbose: verbose, environment: environment)
    }

    /// `level(environment:)` for `verbose` times `-v`.
    static func level(verbose: Int, environment: [String: String]) throws(CommandFailure) -> Logger.Level? {
        var fromEnvironment: Logger.Level?
        if let text = environment[Self.variable], !text.isEmpty {
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw CommandFailure.usage("\(Self.variable)=\"\(text)\" is not a log level (expected one of: \(names))")
            }
            fromEnvironment = level
        }
        switch verbose {
        case 0: return fromEnvironment
        case 1: return .info
        case 2: return .debug
        default: return .trace
        }
    }

    /// The command's logger: lines on standard error at the chosen level, or a logger that
    /// writes nothing. Commands pass it to the library types they create (`logger:`).
    func logger(environment: [String: String]) throws(CommandFailure) -> Logger {
        try Self.logger(verbose: verbose, environment: environment)
    }

    /// `logger(environment:)` for `verbose` times `-v`.
    static func logger(verbose: Int, environment: [String: String]) throws(CommandFailure) -> Logger {
        guard let level = try level(verbose: verbose, environment: environment) else {
            return .disabled
        }
        return Logger(label: "imgpolicy") { _ in StandardErrorLogHandler(level: level) }
    }
}
