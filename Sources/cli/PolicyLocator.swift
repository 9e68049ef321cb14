#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy

/// Finds the policy a user names: a path (anything with a `/` or ending in `.json`), or the
/// name of a bundled policy, looked up as `NAME.json` in, in order:
/// `$IMGPOLICY_POLICY_DIR`, a `policies/` folder beside the executable or up to four folders
/// above it (the package checkout, for `swift run` and `.build/debug/imgpolicy`), and
/// `<prefix>/share/imgpolicy/policies` for an installed `<prefix>/bin/imgpolicy`.
/// `default` is built in, so it works with no file at all.
enum PolicyLocator {
    static func load(_ reference: String) throws -> ImagePolicy {
        if reference.contains("/") || reference.hasSuffix(".json") {
            return try reporting { try ImagePolicy.load(contentsOf: reference) }
        }
        let folders = searchFolders()
        for folder in folders {
            let path = folder + "/" + reference + ".json"
            if FileManager.default.fileExists(atPath: path) {
                return try reporting { try ImagePolicy.load(contentsOf: path) }
            }
        }
        if reference == "default" { return ImagePolicy.default }
        let known = Set(folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
        } + ["default"]).sorted()
        throw CommandFailure.usage("no policy named \"\(reference)\" (known: \(known.joined(separator: ", ")); or give a file path)")
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
