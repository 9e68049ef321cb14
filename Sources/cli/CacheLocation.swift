import ArgumentParser
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Policy
import Support

/// `--cache-dir DIR`, shared by the commands that use the disk cache.
struct CacheLocation: ParsableArguments {
    /// `--cache-dir DIR`, as every command that uses the disk cache declares it.
    static var declaration: OptionDeclaration {
        .value("cache-dir", valueName: "dir", help: "The disk cache folder (default: $XDG_CACHE_HOME/imgpolicy, else ~/.cache/imgpolicy).")
    }

    @Option(name: Self.declaration.argumentName, help: Self.declaration.argumentHelp)
    var path: String?

    /// `--cache-dir`, else `$XDG_CACHE_HOME/imgpolicy` (an absolute path), else
    /// `$HOME/.cache/imgpolicy` (`HOME` an existing absolute folder), else nil: with no usable
    /// `HOME` nothing is created, neither `HOME` itself nor `./.cache`.
    func folder() throws -> String? {
        try Self.folder(path: path)
    }

    /// `folder()` for `--cache-dir path` (nil: not given). An `XDG_CACHE_HOME` that is not UTF-8
    /// and names nothing is refused (exit 64).
    static func folder(path: String?) throws -> String? {
        if let path { return path }
        try ProcessEnvironment.checkDefaultLocation("XDG_CACHE_HOME")
        return UserFolder.base("XDG_CACHE_HOME", homeSubfolder: ".cache", environment: ProcessEnvironment.variables)
            .map { $0 + "/imgpolicy" }
    }

    /// Opens the cache, creating its folder. A folder that is not a cache (not empty, no
    /// `.imgpolicy-cache` marker) or cannot be opened, or no folder at all (no `--cache-dir` and
    /// no usable `HOME`), is exit 74, naming it.
    func open(logger: Logger = .disabled) throws -> DiskCache {
        try Self.open(path: path, logger: logger)
    }

    /// `open(logger:)` for `--cache-dir path` (nil: not given).
    static func open(path: String?, logger: Logger = .disabled) throws -> DiskCache {
        if path?.isEmpty == true { throw CommandFailure.usage("--cache-dir: the path is empty") }
        guard let folder = try folder(path: path) else {
            throw CommandFailure(UserFolder.missingMessage("XDG_CACHE_HOME", what: "cache", option: "--cache-dir DIR"), status: .ioError)
        }
        do {
            return try DiskCache(folder: folder, logger: logger)
        } catch {
            throw CommandFailure("cannot open the cache: \(error)", status: .ioError)
        }
    }

    /// Opens the cache to look at it only (`cache stats`, `cache list`, `stats`): nothing is
    /// created or written, not its folder, marker, journal or `tmp/` (`DiskCache.inspecting`).
    /// Returns the folder, and the cache or nil when the folder is missing or empty (no image). No
    /// folder at all (no `--cache-dir` and no usable `HOME`), something other than a folder there,
    /// a folder that is not a cache, or one that cannot be read: exit 74, naming it.
    func inspect(logger: Logger = .disabled) throws -> (folder: String, cache: DiskCache?) {
        if path?.isEmpty == true { throw CommandFailure.usage("--cache-dir: the path is empty") }
        guard let folder = try folder() else {
            throw CommandFailure(UserFolder.missingMessage("XDG_CACHE_HOME", what: "cache", option: "--cache-dir DIR"), status: .ioError)
        }
        guard try Self.folderExists(folder) else { return (folder, nil) }
        do {
            return (folder, try DiskCache.inspecting(folder: folder, logger: logger))
        } catch {
            throw CommandFailure("cannot open the cache: \(error)", status: .ioError)
        }
    }

    /// Whether the cache folder `folder` exists (a missing one is an empty cache); exit 74 when
    /// something else is there: a file, a FIFO, a device, a symbolic link to nothing or a loop,
    /// which `--fetch` and `cache` refuse too, so that a decision never answers "placeholder"
    /// from a cache it could not read. An empty path is a usage error.
    static func folderExists(_ folder: String) throws -> Bool {
        guard !folder.isEmpty else { throw CommandFailure.usage("--cache-dir: the path is empty") }
        let kind = FileKind(path: folder, followingLinks: true)
        if kind == .directory { return true }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            let code = errno
            if code == ENOENT { return false }
            throw CommandFailure("\(folder): cannot use it as the cache folder: \(String(cString: strerror(code)).lowercased())", status: .ioError)
        }
        let what = kind?.article ?? "a symbolic link to nothing (or a loop)"
        throw CommandFailure("\(folder): cannot use it as the cache folder: it is \(what), not a folder", status: .ioError)
    }

    /// For a decision, which only reads the cache (`--cache-dir path`, nil: not given): opens it
    /// only if its folder exists and holds
    /// something. A missing or empty folder holds no image, so the decision is the same without
    /// opening it, and nothing is written: a missing folder is not created, an empty one is not
    /// made a cache (its marker, journal and `tmp` are written by the first `--fetch` or `cache`
    /// command). A folder that cannot be listed is opened, which reports why (exit 74).
    ///
    /// A folder holding only the cache's marker (and perhaps its usage ledger, `usage/`) is a
    /// cache with no image: the same, nothing opened or written. Anything else is opened, so that
    /// a folder that is not a cache (foreign files, or a ledger without the marker) is refused
    /// as by `--fetch` and `cache` (exit 74), untouched.
    static func openUnlessEmpty(path: String?, logger: Logger = .disabled) throws -> DiskCache? {
        guard let folder = try folder(path: path), try folderExists(folder) else { return nil }
        if holdsNoImage(folder) { return nil }
        return try open(path: path, logger: logger)
    }

    /// Whether `path` lists nothing but `.` and `..`, or nothing but the cache marker (a regular
    /// file) and `usage`; false if it cannot be listed.
    private static func holdsNoImage(_ path: String) -> Bool {
        guard let listing = opendir(path) else { return false }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            // Any other name (or a name that is not UTF-8) is something to open and check.
            guard name == marker || name == "usage" else { return false }
            names.append(name)
        }
        guard !names.isEmpty else { return true }
        // The marker must be there, as a regular file, for `usage/` to be the cache's own.
        return names.contains(marker) && FileKind(path: path + "/" + marker, followingLinks: false) == .regular
    }

    /// The cache marker's name (`DiskCache`'s).
    private static let marker = ".imgpolicy-cache"
}
