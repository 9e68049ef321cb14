import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy

extension NetworkKind: ExpressibleByArgument {}
extension Variant: ExpressibleByArgument {}

/// `--network`: a kind, or `auto` to detect it.
enum NetworkChoice: String, ExpressibleByArgument, CaseIterable {
    case wifi, cellular, wired, offline, unknown, auto
}

/// `--settings FILE`, shared by the commands that read settings.
struct SettingsLocation: ParsableArguments {
    @Option(name: .customLong("settings"),
            help: ArgumentHelp("The settings file (default: $XDG_CONFIG_HOME/imgpolicy/settings.json, else ~/.config/imgpolicy/settings.json).",
                               valueName: "file"))
    var path: String?

    /// The store at the chosen path.
    func store() -> FileSettingsStore {
        Self.store(path: path)
    }

    /// The store at `path` (`--settings`), else at the default location.
    static func store(path: String?) -> FileSettingsStore {
        path.map { FileSettingsStore(path: $0) } ?? FileSettingsStore.atDefaultLocation(environment: ProcessEnvironment.variables)
    }
}

/// Writes `text` and a newline to standard output, with every control character but `\n` and `\t`
/// escaped (see `TerminalText`); callers escape untrusted parts with `TerminalText.escaped(_:)`
/// first when they must stay on one line.
func printLine(_ text: String) {
    print(TerminalText.escapedKeepingLayout(text))
}
