#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder under which a default location (settings, cache) lives: an XDG base directory, else
/// a folder under the user's home. Only a trustworthy base is returned, so that a missing or odd
/// environment never makes the command create folders where nobody asked:
/// - `$XDG_…` is used when it is an absolute path (created when missing, as the XDG spec says);
///   empty or relative, it is ignored;
/// - else `$HOME/<subfolder>` when `HOME` is an absolute path to a folder that exists. An unset,
///   empty or relative `HOME`, or one that does not exist (`/nonexistent` for Debian's service
///   users), gives nil: `HOME` itself is never created, and `.` is never used in its place.
package enum UserFolder {
    /// The base folder named by `variable` (`XDG_CONFIG_HOME`), else `$HOME/<homeSubfolder>`
    /// (`.config`), or nil when neither can be trusted.
    package static func base(_ variable: String, homeSubfolder: String, environment: [String: String]) -> String? {
        if let xdg = environment[variable], xdg.hasPrefix("/") { return xdg }
        guard let home = environment["HOME"], home.hasPrefix("/"), FileKind(path: home, followingLinks: true) == .directory else {
            return nil
        }
        return (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/" + homeSubfolder
    }

    /// The message when there is no base folder: what to pass instead.
    package static func missingMessage(_ variable: String, what: String, option: String) -> String {
        "no default \(what) location: HOME is not an existing absolute folder and \(variable) is not an absolute path; pass \(option) or set HOME"
    }
}
