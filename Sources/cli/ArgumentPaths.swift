import Policy
import Support

/// Arguments (and path variables) whose bytes are not UTF-8, such as a file name with the byte
/// 0xFF (docs/command-inputs.md).
///
/// A Swift `String` cannot hold such a name: `CommandLine.arguments` repairs each bad byte as
/// U+FFFD, which names another file, so `--cache-dir "c\xFF"` used to create a folder `c\u{FFFD}`
/// and `--settings "s\xFF.json"` to read a missing file and print defaults. Here each such argument
/// is made, before anything is parsed, into a UTF-8 path to the same file through the kernel's
/// `/proc/self/fd` (Linux):
///
/// - its folder is opened (`O_PATH`) and the argument becomes `/proc/self/fd/N/NAME` when its
///   last component is UTF-8: the file is read, written or created as given;
/// - else the file itself is opened (`O_PATH`) and the argument becomes `/proc/self/fd/N`: an
///   existing file or folder is read and used; it is never replaced (`AtomicFileWriter` refuses
///   a target whose real path is not UTF-8);
/// - else (nothing there to open) the run is refused, exit 64, naming the argument.
///
/// Messages show the user's path, each bad byte as `\xHH` (`shown(_:)` on standard error and in
/// text lines). An argument that is UTF-8 is kept exactly as it was.
enum ArgumentPaths {
    /// One argument made into a path through `/proc/self/fd`.
    struct Substitute: Sendable {
        /// `/proc/self/fd/N`, the descriptor's path.
        var descriptorPath: String
        /// What the descriptor stands for, as the user wrote it (`\xHH` for bad bytes).
        var shown: String
        /// The descriptor is the file itself (its name is not UTF-8), not its folder.
        var isWholeFile: Bool
    }

    /// The command line with each argument that is not UTF-8 replaced, and what was replaced;
    /// `refused` names the first argument that names nothing (the run is then refused).
    struct Prepared: Sendable {
        var arguments: [String]
        var substitutes: [Substitute]
        var refused: String?
        /// The path variables made into paths, by name (`ProcessEnvironment` reads these values).
        var environment: [String: String] = [:]
        /// The path variables that are not UTF-8 and name nothing, by name, with the message that
        /// says so: not a reason to refuse every command (`--version`, `--help`, a decision given
        /// its folders), only those that need that folder (`ProcessEnvironment.unresolved`).
        var unresolvedVariables: [String: String] = [:]
    }

    /// The options whose value is a path (or, for `--policy`, a policy's name or file).
    static let pathOptions = ["--item", "--cache-dir", "--settings", "--output", "--policy", "--root"]

    /// The path variables read as paths (a value that is not UTF-8 is made into a path as an
    /// argument is).
    static let pathVariables = ["HOME", "IMGPOLICY_POLICY_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"]

    /// Whether any argument or path variable was made into a path (almost never).
    static var hasSubstitutes: Bool { !prepared.substitutes.isEmpty }

    /// Read once, when first asked (after `StandardStreams.reserveClosedDescriptors()`). The
    /// common case, every argument UTF-8, checks bytes and makes each `String` as
    /// `CommandLine.arguments` does, with nothing generic (docs/startup.md).
    static let prepared: Prepared = {
        var prepared = Prepared(arguments: [], substitutes: [], refused: nil)
        let count = Int(CommandLine.argc)
        prepared.arguments.reserveCapacity(count)
        for index in 0..<count {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
            if PathBytes.isUTF8(bytes) {
                prepared.arguments.append(String(cString: argument))
                continue
            }
            // `--name=VALUE`: the value is the path.
            let equals = bytes.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) ? bytes.firstIndex(of: UInt8(ascii: "=")) : nil
            let prefix = equals.flatMap { String(validating: UnsafeBufferPointer(rebasing: bytes[...$0]), as: UTF8.self) } ?? ""
            let value = equals.map { UnsafeBufferPointer(rebasing: bytes[($0 + 1)...]) } ?? bytes
            // Only a path is made into one: the value of a path option, or a file or name given to
            // `policy`. Anything else that is not UTF-8 (a setting's key or value, say) is refused
            // below rather than stored as `/proc/self/fd/N`.
            let option = equals == nil ? prepared.arguments.last ?? "" : String(prefix.dropLast())
            let isPath = pathOptions.contains(option) || (equals == nil && prepared.arguments.dropFirst().first == "policy")
            if index > 0, isPath, equals == nil || !prefix.isEmpty, let (path, substitute) = substitute(value) {
                prepared.arguments.append(prefix + path)
                prepared.substitutes.append(substitute)
            } else {
                let shown = PathBytes.displayed(bytes)
                if index > 0 && prepared.refused == nil {
                    prepared.refused = isPath
                        ? "argument \(index) \"\(shown)\" is not UTF-8 and names nothing that exists: "
                            + "imgpolicy reads and writes such names only when they exist (or their folder does, for a UTF-8 file name)"
                        : "argument \(index) \"\(shown)\" is not UTF-8: only a path (the value of \(pathOptions.joined(separator: ", ")), "
                            + "or a policy file) may hold bytes that are not UTF-8"
                }
                prepared.arguments.append(shown)
            }
        }
        for name in pathVariables {
            guard let value = getenv(name) else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value))
            if PathBytes.isUTF8(bytes) { continue }
            if let (path, substitute) = substitute(bytes) {
                prepared.substitutes.append(substitute)
                prepared.environment[name] = path
            } else {
                prepared.unresolvedVariables[name] = "\(name)=\"\(PathBytes.displayed(bytes))\" is not UTF-8 and names nothing that exists"
            }
        }
        // Longest first, so that `/proc/self/fd/12` is replaced before `/proc/self/fd/1`.
        if prepared.substitutes.count > 1 { prepared.substitutes.sort { $0.descriptorPath.count > $1.descriptorPath.count } }
        return prepared
    }()

    /// `bytes` as a UTF-8 path to the same file through `/proc/self/fd`, or nil when there is
    /// nothing to open (or no `/proc`).
    static func substitute(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, Substitute)? {
        #if os(Linux)
        var whole = Array(bytes)
        while whole.count > 1 && whole.last == UInt8(ascii: "/") { whole.removeLast() }
        let slash = whole.lastIndex(of: UInt8(ascii: "/"))
        let name = Array(whole[(slash.map { $0 + 1 } ?? 0)...])
        if let nameText = String(validating: name, as: UTF8.self), !nameText.isEmpty, nameText != ".", nameText != ".." {
            // The folder (`.` for a bare name, `/` for `/NAME`) through a descriptor; the name as text.
            let folder: [UInt8] = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(whole[..<$0]) } ?? [UInt8(ascii: ".")]
            guard let fd = openPath(folder, directory: true) else { return nil }
            let descriptorPath = "/proc/self/fd/\(fd)"
            return (descriptorPath + "/" + nameText, Substitute(descriptorPath: descriptorPath, shown: PathBytes.displayed(folder), isWholeFile: false))
        }
        guard let fd = openPath(whole, directory: false) else { return nil }
        let descriptorPath = "/proc/self/fd/\(fd)"
        return (descriptorPath, Substitute(descriptorPath: descriptorPath, shown: PathBytes.displayed(whole), isWholeFile: true))
        #else
        return nil
        #endif
    }

    /// Linux's `O_PATH` (010000000 on x86-64 and ARM64), which Glibc's module does not export
    /// (it needs `_GNU_SOURCE`): a descriptor that names a file without opening it for reading.
    private static let pathOnly: Int32 = 0o10_000_000

    /// An `O_PATH` descriptor of `path` (following links, as opening it would), kept for the
    /// life of the process; nil when it cannot be opened.
    private static func openPath(_ path: [UInt8], directory: Bool) -> Int32? {
        #if os(Linux)
        let fd = (path + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, pathOnly | O_CLOEXEC | (directory ? O_DIRECTORY : 0)) }
        }
        return fd >= 0 ? fd : nil
        #else
        return nil
        #endif
    }

    /// The failure for replacing the file at `path` (`what`: "cannot write the image") when
    /// `path` stands for a file whose own name is not UTF-8, which cannot be replaced (its name
    /// cannot be written); nil for any other path.
    static func replacementRefusal(_ path: String, _ what: String) -> CommandFailure? {
        guard let substitute = prepared.substitutes.first(where: { $0.isWholeFile && $0.descriptorPath == path }) else { return nil }
        return CommandFailure("\(substitute.shown): \(what): its name is not UTF-8; imgpolicy reads such a file but never replaces it (rename it)",
                              status: .ioError)
    }

    /// `text` with each `/proc/self/fd/N` this run made shown as the path the user wrote.
    static func shown(_ text: String) -> String {
        guard hasSubstitutes else { return text }
        let substitutes = prepared.substitutes
        guard text.contains("/proc/self/fd/") else { return text }
        var result = text
        for substitute in substitutes {
            result = replacing(substitute.descriptorPath, with: substitute.shown, in: result)
        }
        return result
    }

    /// Every `path` in `text` not followed by a digit (`/proc/self/fd/1` is not in `/proc/self/fd/12`).
    private static func replacing(_ path: String, with shown: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = rest.firstRange(of: path) {
            let next = rest[range.upperBound...].first
            result += rest[..<range.lowerBound]
            result += next.map { $0.isASCII && $0.isNumber } == true ? path : shown
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
