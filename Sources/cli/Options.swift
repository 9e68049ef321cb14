import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

extension NetworkKind: ExpressibleByArgument {}
extension Variant: ExpressibleByArgument {}

/// `--network`: a network state, or `auto` to detect it.
///
/// Read by the one parser `IMGPOLICY_NETWORK` uses (`NetworkState(parsing:)`), so that the flag
/// and the variable accept the same text: a kind (`wifi`, `cellular`, `wired`, `offline`,
/// `unknown`), optionally followed by `,expensive`, `,constrained`, `,roaming` and `,captive`, in
/// any case, spaces around each part ignored (`--network WIFI`, `--network cellular,roaming`).
enum NetworkChoice: Equatable {
    /// Detect the state (after `IMGPOLICY_NETWORK`).
    case auto
    /// This state.
    case state(NetworkState)

    /// `auto` (any case), or what `NetworkState(parsing:)` reads; nil for anything else.
    init?(parsing text: String) {
        // The common spellings by a plain switch (start-up: nothing generic; docs/startup.md).
        switch text {
        case "auto": self = .auto; return
        case "wifi": self = .state(NetworkState(.wifi)); return
        case "cellular": self = .state(NetworkState(.cellular)); return
        case "wired": self = .state(NetworkState(.wired)); return
        case "offline": self = .state(NetworkState(.offline)); return
        case "unknown": self = .state(NetworkState(.unknown)); return
        default: break
        }
        if String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()).lowercased() == "auto" {
            self = .auto
        } else if let state = NetworkState(parsing: text) {
            self = .state(state)
        } else {
            return nil
        }
    }

    /// The one-line message for a `--network` value `text` that is not a network state.
    static func invalidMessage(_ text: String) -> String {
        "--network \"\(TerminalText.escaped(String(text.prefix(64))))\" is not a network state (expected auto, or wifi, cellular, "
            + "wired, offline or unknown, optionally followed by ,expensive ,constrained ,roaming ,captive; any case)"
    }
}

/// `--settings FILE`, shared by the commands that read settings.
struct SettingsLocation: ParsableArguments {
    /// `--settings FILE`, as every command that reads settings declares it .
    static var declaration: OptionDeclaration {
        .value("settings", valueName: "file",
               help: "The settings file (default: $XDG_CONFIG_HOME/imgpolicy/settings.json, else ~/.config/imgpolicy/settings.json).")
    }

    @Option(name: Self.declaration.argumentName, help: Self.declaration.argumentHelp)
    var path: String?

    /// The store at the chosen path.
    func store() throws(CommandFailure) -> FileSettingsStore {
        try Self.store(path: path)
    }

    /// The store at `path` (`--settings`), else at the default location (an `XDG_CONFIG_HOME`
    /// that is not UTF-8 and names nothing is refused, exit 64).
    static func store(path: String?) throws(CommandFailure) -> FileSettingsStore {
        if let path { return FileSettingsStore(path: path) }
        try ProcessEnvironment.checkDefaultLocation("XDG_CONFIG_HOME")
        return FileSettingsStore.atDefaultLocation(environment: ProcessEnvironment.variables)
    }
}

/// Writes `text` and a newline to standard output (a path made from an argument that is not
/// UTF-8 shown as the user wrote it), with every control character but `\n` and `\t`
/// escaped (see `TerminalText`); callers escape untrusted parts with `TerminalText.escaped(_:)`
/// first when they must stay on one line.
func printLine(_ text: String) {
    print(TerminalText.escapedKeepingLayout(ArgumentPaths.shown(text)))
}
