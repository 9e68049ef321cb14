#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// Finds the policy a user names: a path (anything with a `/` or ending in `.json`), or the
/// name of a bundled policy, looked up as `NAME.json` in, in order:
/// `$IMGPOLICY_POLICY_DIR`, a `policies/` folder beside the executable or up to four folders
/// above it (the package checkout, for `swift run` and `.build/debug/imgpolicy`), and
/// `<prefix>/share/imgpolicy/policies` for an installed `<prefix>/bin/imgpolicy`.
/// `default` is built in, so it works with no file at all.
///
/// The rule never depends on the current folder: `policy check low-data` reads the bundled
/// `low-data.json` even when a file named `low-data` is in the current folder (write
/// `./low-data` for that one). `policy check` and `policy show` say which file they read.
enum PolicyLocator {
    /// Where a policy was read from.
    enum Source: Equatable, CustomStringConvertible {
        /// A path the user gave (it has a `/` or ends in `.json`).
        case path(String)
        /// A bundled policy found by name, at this path.
        case bundled(String)
        /// The built-in `default` (no file).
        case builtIn

        /// `file PATH`, `bundled PATH` or `built in`, for the messages that say what was read.
        var description: String {
            switch self {
            case .path(let path): return "file \(path)"
            case .bundled(let path): return "bundled \(path)"
            case .builtIn: return "built in"
            }
        }
    }

    /// Whether `reference` is a path rather than a bundled policy's name.
    static func isPath(_ reference: String) -> Bool {
        reference.contains("/") || reference.hasSuffix(".json")
    }

    static func load(_ reference: String) throws -> ImagePolicy {
        try loadWithSource(reference).policy
    }

    /// The policy `reference` names and where it was read from. An unknown name is a usage error
    /// listing the known names (and, when a file of that name is in the current folder, how to
    /// name it as a path).
    static func loadWithSource(_ reference: String) throws -> (policy: ImagePolicy, source: Source) {
        if isPath(reference) {
            let shown = ArgumentPaths.shown(reference)
            guard shown != reference else { return (try reporting { try ImagePolicy.load(contentsOf: reference) }, .path(reference)) }
            // A path made from an argument that is not UTF-8 (`/proc/self/fd/N`): named after the
            // file the user gave, not after the descriptor.
            var name = shown.split(separator: "/").last.map(String.init) ?? shown
            if name.hasSuffix(".json") { name.removeLast(5) }
            let bytes = try reporting { try DataFileReader.read(reference) }
            return (try reporting { try ImagePolicy(json: bytes, name: name, source: reference) }, .path(reference))
        }
        let folders = searchFolders()
        for folder in folders {
            let path = folder + "/" + reference + ".json"
            // Anything under that name is the policy asked for, also what cannot be read (a
            // symbolic-link loop, a link to nothing, a FIFO): reading it says what is wrong with
            // it, where "no policy named …" would list it among the known ones.
            if FileKind(path: path, followingLinks: false) != nil {
                return (try reporting { try ImagePolicy.load(contentsOf: path) }, .bundled(path))
            }
        }
        if reference == "default" { return (ImagePolicy.default, .builtIn) }
        let known = Set(folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
        } + ["default"]).sorted()
        var message = "no policy named \"\(reference)\" (known: \(known.joined(separator: ", ")); or give a file path)"
        if !reference.isEmpty, FileKind(path: reference, followingLinks: false) != nil {
            message += "; a bare name is a bundled policy, never a file in the current folder: write ./\(reference) to read that file"
        }
        throw CommandFailure.usage(message)
    }

    static func searchFolders() -> [String] {
        var folders: [String] = []
        if let custom = ProcessEnvironment.variables["IMGPOLICY_POLICY_DIR"], !custom.isEmpty {
            folders.append(custom)
        }
        let executableFolder = PathText.parent(of: executablePath())
        var folder = executableFolder
        for _ in 0...4 {
            let candidate = folder + "/policies"
            if FileManager.default.fileExists(atPath: candidate + "/default.json") { folders.append(candidate) }
            if folder == "/" { break }
            folder = PathText.parent(of: folder)
        }
        let share = PathText.appending("share/imgpolicy/policies", to: PathText.parent(of: executableFolder))
        folders.append(share)
        // Each folder once, in order; a handful of them, so no `Set` (docs/startup.md).
        var unique: [String] = []
        for folder in folders where !unique.contains(folder) { unique.append(folder) }
        return unique
    }

    private static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return (CommandLine.arguments.first.map { URL(fileURLWithPath: $0).standardizedFileURL.path }) ?? "."
    }
}
