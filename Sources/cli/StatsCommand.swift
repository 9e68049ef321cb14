import ArgumentParser
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// `imgpolicy stats [--json] [--since YYYY-MM-DD]`: the data usage ledger kept in the cache
/// folder (what `--fetch` and apps recorded), totals and one row per day.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Data usage: bytes downloaded by network, from the caches, originals not downloaded and the bytes that saved (estimated).",
        discussion: """
            Reads the usage ledger in the cache folder (DIR/usage/, one file per UTC day), written by \
            --fetch and by apps that save a DataUsageRecorder. Without --since: this month (UTC). \
            Saved bytes are an estimate: the originals not downloaded, each counted at the mean size \
            of the originals actually downloaded (whole ledger); none without a downloaded original. \
            A damaged day file is reported and not counted (exit 65); a symbolic link, FIFO or \
            device in its place is refused (exit 66).
            """
    )

    @Flag(help: "One JSON object: since, until, total, days (each with day and the same keys as total), estimate.")
    var json = false

    // `.unconditional`: `--since -1` is not a day, rather than a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("The first day counted (UTC), e.g. 2026-11-01 (default: the first of this month).", valueName: "YYYY-MM-DD"))
    var since: String?

    @OptionGroup var cache: CacheLocation
    @OptionGroup var logging: LoggingOptions

    func run() throws {
        if let since, UsageDay(parsing: since) == nil {
            throw CommandFailure.usage("--since \(since): not a day; expected YYYY-MM-DD (a UTC day that exists, from 1970)")
        }
        let logger = try logging.logger(environment: ProcessEnvironment.variables)
        // No folder at all (no --cache-dir, no usable HOME), or a folder that is not a cache: exit
        // 74. Only looked at: nothing is created or written; none is empty.
        let folder = try cache.inspect(logger: logger).folder
        let today = UsageDay.today()
        let first = since.flatMap(UsageDay.init(parsing:)) ?? today.firstOfMonth
        let reading = DataUsageLedger(cacheFolder: folder, logger: logger).read()
        let perOriginal = reading.total().averageOriginalBytes
        let days = reading.days.filter { $0.key >= first }.sorted { $0.key < $1.key }
        let total = reading.total(since: first)
        if json {
            let originals = reading.total().amount { $0.source == .network && $0.variant == .original }
            let estimate = JSONValue(.object([
                ("bytesPerOriginal", perOriginal.map { JSONValue(.number(String($0))) } ?? JSONValue(.null)),
                ("originalsMeasured", JSONValue(.number(String(originals.transfers)))),
                ("method", JSONValue(.string("mean size of the originals downloaded, whole ledger"))),
            ]))
            let dayValues = days.map { day, usage -> JSONValue in
                guard case .object(let members) = usage.outputJSON(perOriginal: perOriginal).kind else { return JSONValue(.null) }
                return JSONValue(.object([("day", JSONValue(.string(day.description)))] + members))
            }
            let report = JSONValue(.object([
                ("since", JSONValue(.string(first.description))), ("until", JSONValue(.string(today.description))),
                ("total", total.outputJSON(perOriginal: perOriginal)), ("days", JSONValue(.array(dayValues))),
                ("estimate", estimate),
            ]))
            printLine(JSONWriter.compactText(of: report))
        } else {
            let period = since == nil ? "this month (since \(first), UTC)" : "since \(first) (UTC)"
            var lines: [String]
            if total.isEmpty {
                lines = ["\(period): nothing recorded"]
            } else {
                let cellular = total.receivedBytes { $0.kind == .cellular }
                let saved = perOriginal.map { perOriginal in
                    let estimate = total.savedBytesEstimate(perOriginal: perOriginal)
                    return estimate == nil ? DataUsage.savedText(nil, separator: "") : DataUsage.savedText(estimate, separator: " (") + ")"
                } ?? "saved: no estimate yet"
                lines = ["\(period): \(DataUsage.bytesText(cellular)) on cellular, \(saved)",
                         "total: " + total.summaryText(perOriginal: perOriginal)]
            }
            for (day, usage) in days { lines.append("\(day)  " + usage.summaryText(perOriginal: perOriginal)) }
            printLine(lines.joined(separator: "\n"))
        }
        guard !reading.problems.isEmpty else { return }
        for problem in reading.problems {
            FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(problem.description))\n".utf8))
        }
        let damaged = reading.problems.contains { $0.code == .damaged }
        throw CommandFailure("", status: damaged ? .dataError : .noInput)
    }
}
