import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// The `imgpolicy` command: decides which image to show or fetch for an item on a network.
struct Imgpolicy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imgpolicy",
        abstract: "Decide which image (original, thumbnail, cached, placeholder) to show for an item on the current network.",
        discussion: """
            Exit status: 0 success; 1 a looked-up setting is not set; 64 usage error (unknown flag or \
            value, unknown setting in --set, a value that is not a boolean, an unknown policy name, a \
            bad --network or IMGPOLICY_NETWORK or IMGPOLICY_LOG_LEVEL, an argument that is not UTF-8 and names \
            nothing that exists); 65 bad item, policy or settings file (or a \
            policy whose own cases fail; an item URL with credentials, a bad host or port, or longer \
            than 8 KiB; a damaged usage record, for stats); 66 a file that does not exist, cannot be read, or is not a regular file (a \
            FIFO, device, socket or folder); 69 a download failed (server or network), or --output has no image to write (the placeholder); 74 a local \
            file or the cache could not be written (--output: a FIFO nobody reads, a folder, a \
            socket or a block device; no usable HOME for a default location that must be written).
            """,
        version: Version.current,
        subcommands: [Decide.self, SettingsCommand.self, PolicyCommand.self, NetworkCommand.self, CacheCommand.self,
                      StatsCommand.self, SimulateCommand.self],
        defaultSubcommand: Decide.self
    )

    /// Parses with swift-argument-parser, runs, and turns every failure into one line on standard
    /// error and a documented exit status: no stack trace, whatever the input. (`CommandEntry`
    /// runs the plain decision without it.)
    static func main() async {
        do {
            var command = try parseAsRoot(Array(ArgumentPaths.prepared.arguments.dropFirst()))
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error)
        }
    }

    /// Reports `error` (one line on standard error, or the text of `--help` and `--version` on
    /// standard output) and exits with its status.
    static func fail(with error: any Error) -> Never {
        if let failure = error as? CommandFailure { failure.exit() }
        if let error = error as? DataFileError { CommandFailure(error).exit() }
        let code = exitCode(for: error)
        if code == .success {
            // --help, --version: the full text, on standard output.
            print(fullMessage(for: error))
            exitProcess(0)
        }
        // ArgumentParser lists choices on separate lines; fold them into one.
        // A list item is "  - choice"; a message's own "--flag" keeps its dashes.
        let lines = Self.message(for: error).split(separator: "\n").map { line in
            let text = line.drop { $0 == " " }
            return String(text.hasPrefix("- ") ? text.dropFirst(2) : text)
        }.filter { !$0.isEmpty }
        var message = lines.first ?? "invalid usage"
        if lines.count > 1 { message += " " + lines.dropFirst().joined(separator: ", ") }
        if message.hasPrefix("Error: ") { message.removeFirst(7) }
        if message.hasPrefix("Missing expected argument "), let hint = dashedValueHint(Array(ArgumentPaths.prepared.arguments.dropFirst()),
                                                                                    missing: String(message.dropFirst(26))) {
            message = hint
        }
        CommandFailure(message, status: code == .validationFailure ? .usage : ExitStatus(rawValue: code.rawValue) ?? .usage).exit()
    }

    /// When a positional value (`missing`, `'<value>'`) was missing because one that starts with
    /// `-` was taken for an option (`settings set b -0`, `settings get -x`), the message that says
    /// so and what to write instead: the value after `--`, which ends the options. Nil when no such
    /// argument was given. (Options that take a number
    /// read it as given: `--items -1` is refused as a value.)
    static func dashedValueHint(_ arguments: [String], missing: String) -> String? {
        let options = arguments.prefix { $0 != "--" }
        // `-v`, `-vv`… and `-h` are this command's own short flags; a long `--name` is an option.
        guard let position = options.firstIndex(where: { argument in
            argument.count > 1 && argument.hasPrefix("-") && !argument.hasPrefix("--") && argument != "-h"
                && !argument.dropFirst().allSatisfy { $0 == "v" }
        }) else { return nil }
        let value = arguments[position]
        let rest = arguments[(position + 1)...]
        let example = rest.contains(where: { $0.hasPrefix("-") })
            ? "imgpolicy \(arguments[..<position].joined(separator: " ")) [options] -- \(value)"
            : "imgpolicy \((arguments[..<position] + ["--", value] + rest).joined(separator: " "))"
        return "\"\(TerminalText.escaped(value))\" was read as an option, so \(missing) is missing; a value that starts with \"-\" goes after \"--\", "
            + "which ends the options: \(TerminalText.escaped(example))"
    }
}
