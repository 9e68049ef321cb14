import ArgumentParser
import Fetch
import Foundation

/// `imgpolicy cache stats|list|clear`: the disk cache.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or clear the disk cache.",
        subcommands: [Stats.self, List.self, Clear.self]
    )

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes and folder of the disk cache.")
        @OptionGroup var cache: CacheLocation

        func run() throws {
            let disk = try cache.open()
            let stats = disk.statistics
            printLine("folder: \(disk.folder)\nentries: \(stats.count)\nbytes: \(stats.bytes)\ncapacity: \(disk.capacity)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every entry: its size in bytes and its URL.")
        @OptionGroup var cache: CacheLocation

        func run() throws {
            let lines = try cache.open().entries().map { "\($0.size)\t\($0.url)" }
            if !lines.isEmpty { printLine(lines.joined(separator: "\n")) }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var cache: CacheLocation

        func run() throws {
            let disk = try cache.open()
            let count = disk.statistics.count
            disk.removeAll()
            printLine("removed \(count) entries from \(disk.folder)")
        }
    }
}
