import ArgumentParser
import Fetch
import Foundation
import Logging

/// `--cache-dir DIR`, shared by the commands that use the disk cache.
struct CacheLocation: ParsableArguments {
    @Option(name: .customLong("cache-dir"),
            help: ArgumentHelp("The disk cache folder (default: $XDG_CACHE_HOME/imgpolicy, else ~/.cache/imgpolicy).", valueName: "dir"))
    var path: String?

    var folder: String {
        path ?? DiskCache.defaultFolder(environment: ProcessInfo.processInfo.environment)
    }

    /// Opens the cache, creating its folder. A folder that is not a cache (not empty, no
    /// `.imgpolicy-cache` marker) or cannot be opened is exit 74, naming it.
    func open(logger: Logger = Logger(label: "imgpolicy", factory: { _ in SwiftLogNoOpLogHandler() })) throws -> DiskCache {
        do {
            return try DiskCache(folder: folder, logger: logger)
        } catch {
            throw CommandFailure("cannot open the cache: \(error)", status: .ioError)
        }
    }

    /// Opens the cache only if its folder exists (a decision should not create folders).
    func openIfPresent(logger: Logger = Logger(label: "imgpolicy", factory: { _ in SwiftLogNoOpLogHandler() })) throws -> DiskCache? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else { return nil }
        return try open(logger: logger)
    }
}
