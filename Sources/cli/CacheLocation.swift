import ArgumentParser
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Policy

/// `--cache-dir DIR`, shared by the commands that use the disk cache.
struct CacheLocation: ParsableArguments {
    @Option(name: .customLong("cache-dir"),
            help: ArgumentHelp("The disk cache folder (default: $XDG_CACHE_HOME/imgpolicy, else ~/.cache/imgpolicy).", valueName: "dir"))
    var path: String?

    /// `--cache-dir`, else `$XDG_CACHE_HOME/imgpolicy` (an absolute path), else
    /// `$HOME/.cache/imgpolicy` (`HOME` an existing absolute folder), else nil: with no usable
    /// `HOME` nothing is created, neither `HOME` itself nor `./.cache`.
    var folder: String? {
        path ?? UserFolder.base("XDG_CACHE_HOME", homeSubfolder: ".cache", environment: ProcessInfo.processInfo.environment)
            .map { $0 + "/imgpolicy" }
    }

    /// Opens the cache, creating its folder. A folder that is not a cache (not empty, no
    /// `.imgpolicy-cache` marker) or cannot be opened, or no folder at all (no `--cache-dir` and
    /// no usable `HOME`), is exit 74, naming it.
    func open(logger: Logger = .disabled) throws -> DiskCache {
        guard let folder else {
            throw CommandFailure(UserFolder.missingMessage("XDG_CACHE_HOME", what: "cache", option: "--cache-dir DIR"), status: .ioError)
        }
        do {
            return try DiskCache(folder: folder, logger: logger)
        } catch {
            throw CommandFailure("cannot open the cache: \(error)", status: .ioError)
        }
    }

    /// Opens the cache only if its folder exists (a decision should not create folders); no
    /// folder at all is no cache.
    func openIfPresent(logger: Logger = .disabled) throws -> DiskCache? {
        guard let folder, FileKind(path: folder, followingLinks: true) == .directory else { return nil }
        return try open(logger: logger)
    }
}
