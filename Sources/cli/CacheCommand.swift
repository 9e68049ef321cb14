import Support
import ArgumentParser
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `imgpolicy cache stats|list|clear`: the disk cache.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or clear the disk cache.",
        subcommands: [Stats.self, List.self, Clear.self]
    )

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Entries, bytes and folder of the disk cache.",
            discussion: "bytes: the images' bytes; file bytes: the entry files' (header and URL included), which the capacity counts.")
        @OptionGroup var cache: CacheLocation
        @OptionGroup var logging: LoggingOptions

        func run() throws {
            // Only looked at: a missing or empty folder is an empty cache, and nothing is created.
            let (folder, disk) = try cache.inspect(logger: logging.logger(environment: ProcessEnvironment.variables))
            // The images' bytes, and the files' (header and URL included: what the capacity counts).
            let entries = disk?.entries() ?? []
            let imageBytes = entries.reduce(0) { $0 + $1.imageBytes }, fileBytes = entries.reduce(0) { $0 + $1.size }
            let capacity = disk?.capacity ?? DiskCache.defaultCapacity
            printLine("folder: \(disk?.folder ?? folder)\nentries: \(entries.count)\nbytes: \(imageBytes)\nfile bytes: \(fileBytes)\ncapacity: \(capacity)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every entry: its image's size in bytes and its URL.")
        @OptionGroup var cache: CacheLocation
        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let disk = try cache.inspect(logger: logging.logger(environment: ProcessEnvironment.variables)).cache
            // A URL comes from a file anyone with access to the folder may have written: escaped.
            let lines = (disk?.entries() ?? []).map { "\($0.imageBytes)\t\(TerminalText.escaped($0.url))" }
            if !lines.isEmpty { printLine(lines.joined(separator: "\n")) }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry.",
            discussion: """
                Removes only the cache's own files (entries and stale temporaries, never through a \
                symbolic link). A folder that is not a cache (not empty, no .imgpolicy-cache marker) \
                is refused (exit 74); so is anything that could not be removed (one line naming it, exit 74).
                """
        )
        @OptionGroup var cache: CacheLocation
        @OptionGroup var logging: LoggingOptions

        func run() throws {
            let disk = try cache.open(logger: logging.logger(environment: ProcessEnvironment.variables))
            let report = disk.removeAll()
            printLine("removed \(report.removed) entries from \(disk.folder)")
            if let first = report.failures.first {
                let more = report.failures.count > 1 ? " (and \(report.failures.count - 1) more)" : ""
                throw CommandFailure("\(first.path): \(first.message)\(more)", status: .ioError)
            }
        }
    }
}
