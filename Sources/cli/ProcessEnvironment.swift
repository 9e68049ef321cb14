#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// The process's environment variables, read once from the C library's `environ`
/// (docs/startup.md): `ProcessInfo.environment` builds a new dictionary at each call (a decision
/// read it three times) and splits each entry at the first `=` by grapheme, 10 % of a decision's
/// instructions. Here an entry is split at its first `=` byte, as the C library reads it; a
/// value that is not UTF-8 reads with each such byte written `\xHH`, as arguments are shown
/// (`PathBytes.displayed`: never repaired as U+FFFD, which would show another text), and a name
/// given twice keeps its last value, as `ProcessInfo.environment` does. A path variable (`HOME`,
/// `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `IMGPOLICY_POLICY_DIR`) that is not UTF-8 reads as a path to
/// the same folder through `/proc/self/fd` (`ArgumentPaths`); one that names nothing is left out
/// (`unresolved` says why): HOME and IMGPOLICY_POLICY_DIR then as a HOME or a policy folder that
/// does not exist, an XDG folder as a refusal of the commands that need it (exit 64). The command
/// never changes its own environment.
enum ProcessEnvironment {
    /// Every variable, by name.
    static let variables: [String: String] = {
        #if canImport(Glibc)
        let entries = environ
        var count = 0
        while entries[count] != nil { count += 1 }
        var variables = [String: String](minimumCapacity: count)
        for index in 0..<count {
            guard let entry = entries[index], let equals = strchr(entry, Int32(UInt8(ascii: "="))) else { continue }
            let bytes = UnsafeRawPointer(entry).assumingMemoryBound(to: UInt8.self)
            let nameLength = entry.distance(to: equals)
            let name = text(UnsafeBufferPointer(start: bytes, count: nameLength))
            variables[name] = text(UnsafeBufferPointer(start: bytes + nameLength + 1, count: strlen(equals + 1)))
        }
        // A path variable that is not UTF-8, as a path to the same folder (`ArgumentPaths`), or
        // left out when it names nothing.
        for (name, path) in ArgumentPaths.prepared.environment { variables[name] = path }
        for name in ArgumentPaths.prepared.unresolvedVariables.keys { variables.removeValue(forKey: name) }
        return variables
        #else
        return ProcessInfo.processInfo.environment
        #endif
    }()

    /// `bytes` as text: UTF-8 as it is, anything else with each byte that is not part of valid
    /// UTF-8 written `\xHH`.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        PathBytes.isUTF8(bytes) ? String(decoding: bytes, as: UTF8.self) : PathBytes.displayed(bytes)
    }

    /// Why the path variable `name` is left out of `variables` (it is not UTF-8 and names
    /// nothing), or nil.
    static func unresolved(_ name: String) -> String? {
        ArgumentPaths.prepared.unresolvedVariables[name]
    }

    /// Refuses (exit 64) a default location under `variable` (`XDG_CACHE_HOME`) when it is
    /// set to a path that is not UTF-8 and names nothing: using `HOME` instead would be another
    /// folder than the one asked for.
    static func checkDefaultLocation(_ variable: String) throws(CommandFailure) {
        if let message = unresolved(variable) { throw CommandFailure.usage(message) }
    }
}
