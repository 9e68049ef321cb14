import Fetch
import Foundation
import Policy
import Testing
import TestSupport
import Support

/// `imgpolicy stats` and the usage `--fetch` records, as processes, against a real loopback server.
struct StatsCommandTests {
    let cli = CLIRunner()
    let server: TestHTTPServer
    static let originalSize = 20_000, thumbnailSize = 2_000

    init() throws {
        server = try TestHTTPServer()
        for n in 0..<40 {
            server.route("/o\(n).png", .ok(TestImages.png(size: Self.originalSize, seed: n)))
            server.route("/t\(n).png", .ok(TestImages.png(size: Self.thumbnailSize, seed: 100 + n)))
        }
    }

    var cacheDir: String { cli.home.file("cache") }
    var today: UsageDay { UsageDay.today() }

    /// An item file with items `range`, each with its thumbnail.
    func items(_ range: Range<Int>, name: String = "items.json") throws -> String {
        let items = range.map { #"{"id": "i\#($0)", "original": "\#(server.url("/o\($0).png"))", "thumbnail": "\#(server.url("/t\($0).png"))"}"# }
        return try cli.home.write("[" + items.joined(separator: ",") + "]", to: name)
    }

    func fetch(_ range: Range<Int>, network: String = "cellular", json: Bool = false, name: String = "items.json") async throws -> CLIRunner.Result {
        try await cli.run(["--network", network, "--item", try items(range, name: name), "--fetch", "--cache-dir", cacheDir] + (json ? ["--json"] : []))
    }

    /// The value at `path` (object keys) in a JSON text.
    func value(_ text: some StringProtocol, _ path: String...) throws -> JSONValue.Kind? {
        try value(text, path)
    }

    func value(_ text: some StringProtocol, _ path: [String]) throws -> JSONValue.Kind? {
        var value = try JSONParser().parse(String(text))
        for key in path {
            guard case .object(let members) = value.kind, let next = members.first(where: { $0.key == key })?.value else { return nil }
            value = next
        }
        return value.kind
    }

    /// The whole number at `path` in a JSON text.
    func number(_ text: some StringProtocol, _ path: String...) throws -> Int? {
        guard case .number(let digits)? = try value(text, path) else { return nil }
        return Int(digits)
    }

    @Test func fetchPrintsItsUsageAndStatsShowsTheBytes() async throws {
        let first = try await fetch(0..<3)
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.last == "usage: 6.0 KB downloaded (cellular 6.0 KB in 3 transfers), 0 B from the caches; 3 originals not downloaded (saved: no estimate yet, no original downloaded to estimate from)")
        let wifi = try await fetch(3..<4, network: "wifi", json: true, name: "wifi.json")
        let usageLine = try #require(wifi.stdout.split(separator: "\n").last)
        #expect(try number(usageLine, "usage", "bytes", "byNetwork", "wifi", "original") == Self.originalSize)
        #expect(try number(usageLine, "usage", "transfers", "bySource", "network") == 1)

        let stats = try await cli.run(["stats", "--cache-dir", cacheDir])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.hasPrefix("this month (since \(today.firstOfMonth), UTC): 6.0 KB on cellular, about 60.0 KB saved (estimated)\n"), "\(stats.stdout)")
        #expect(stats.stdout.contains("\n\(today)  26.0 KB downloaded (wifi 20.0 KB in 1 transfer, cellular 6.0 KB in 3 transfers), 0 B from the caches; 3 originals not downloaded"))
        let json = try await cli.run(["stats", "--json", "--cache-dir", cacheDir])
        #expect(json.status == 0)
        #expect(try number(json.stdout, "total", "bytes", "byNetwork", "cellular", "thumbnail") == 3 * Self.thumbnailSize)
        #expect(try number(json.stdout, "total", "bytes", "downloaded") == 3 * Self.thumbnailSize + Self.originalSize)
        #expect(try number(json.stdout, "total", "originalsNotDownloaded", "total") == 3)
        #expect(try number(json.stdout, "total", "savedBytesEstimate") == 3 * Self.originalSize)
        #expect(try number(json.stdout, "estimate", "bytesPerOriginal") == Self.originalSize)
        guard case .array(let days)? = try value(json.stdout, "days") else { Issue.record("no days array"); return }
        #expect(days.count == 1)
        // A second run from the disk cache counts cache bytes, not downloads.
        _ = try await fetch(0..<3)
        let again = try await cli.run(["stats", "--json", "--cache-dir", cacheDir])
        #expect(try number(again.stdout, "total", "bytes", "bySource", "disk") == 3 * Self.thumbnailSize)
        #expect(try number(again.stdout, "total", "bytes", "downloaded") == 3 * Self.thumbnailSize + Self.originalSize)
        #expect(try number(again.stdout, "total", "originalsNotDownloaded", "total") == 6)  // each run counts its own
    }

    @Test func anEmptyOrMissingCacheFolderHasNothingRecorded() async throws {
        for folder in [cacheDir, cli.home.file("empty")] {
            if folder != cacheDir { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            let text = try await cli.run(["stats", "--cache-dir", folder])
            #expect(text.status == 0 && text.stderr.isEmpty, "\(text.stderr)")
            #expect(text.stdout == "this month (since \(today.firstOfMonth), UTC): nothing recorded\n")
            let json = try await cli.run(["stats", "--json", "--cache-dir", folder])
            #expect(json.status == 0)
            #expect(try value(json.stdout, "since") == .string(today.firstOfMonth.description))
            #expect(try value(json.stdout, "until") == .string(today.description))
            #expect(try value(json.stdout, "days") == .array([]))
            #expect(try number(json.stdout, "total", "bytes", "downloaded") == 0)
            #expect(try value(json.stdout, "total", "savedBytesEstimate") == .null)
            #expect(try value(json.stdout, "estimate", "bytesPerOriginal") == .null)
        }
        #expect(!FileManager.default.fileExists(atPath: cacheDir))  // stats creates nothing
    }

    @Test func sinceSelectsTheDaysAndTheDefaultIsThisMonth() async throws {
        _ = try DiskCache(folder: cacheDir)
        let ledger = DataUsageLedger(cacheFolder: cacheDir)
        func usage(_ bytes: Int) -> DataUsage {
            var usage = DataUsage()
            usage.add(.init(bytes: bytes, transfers: 1), for: .init(link: .init(.cellular, isRoaming: true), variant: .thumbnail, source: .network))
            return usage
        }
        try ledger.add(usage(1_000), on: UsageDay(parsing: "2020-01-15")!)
        try ledger.add(usage(5_000), on: today)
        let month = try await cli.run(["stats", "--cache-dir", cacheDir])
        #expect(month.stdout.split(separator: "\n").count == 3, "\(month.stdout)")  // summary, total, today
        #expect(month.stdout.hasPrefix("this month (since \(today.firstOfMonth), UTC): 5.0 KB on cellular, saved: no estimate yet\n"))
        #expect(month.stdout.contains("cellular,roaming 5.0 KB in 1 transfer"))
        let all = try await cli.run(["stats", "--since", "2020-01-01", "--cache-dir", cacheDir])
        #expect(all.stdout.hasPrefix("since 2020-01-01 (UTC): 6.0 KB on cellular"), "\(all.stdout)")
        #expect(all.stdout.contains("\n2020-01-15  1.0 KB downloaded") && all.stdout.contains("\n\(today)  5.0 KB downloaded"))
        let json = try await cli.run(["stats", "--json", "--since", "2020-01-16", "--cache-dir", cacheDir])
        guard case .array(let days)? = try value(json.stdout, "days") else { Issue.record("no days"); return }
        #expect(days.count == 1)
        #expect(try number(json.stdout, "total", "bytes", "byNetwork", "cellular,roaming", "thumbnail") == 5_000)
        // `cache clear` keeps the ledger.
        #expect(try await cli.run(["cache", "clear", "--cache-dir", cacheDir]).status == 0)
        #expect(try await cli.run(["stats", "--since", "2020-01-01", "--cache-dir", cacheDir]).stdout == all.stdout)
    }

    @Test(arguments: ["2026-13-01", "2026-02-30", "yesterday", "2026-1-1", "", "2026-11-23x"])
    func aBadSinceIsAUsageErrorNamingTheFlag(_ since: String) async throws {
        let result = try await cli.run(["stats", "--since", since, "--cache-dir", cacheDir])
        #expect(result.status == 64)
        #expect(result.stderr == "imgpolicy: --since \(since): not a day; expected YYYY-MM-DD (a UTC day that exists, from 1970)\n")
        #expect(result.stdout.isEmpty)
    }

    /// Eight `--fetch` processes at once, each recording into the same day: nothing is lost.
    @Test func processesRecordingAtOnceLoseNothing() async throws {
        let processes = 8, perProcess = 5
        try await withThrowingTaskGroup(of: CLIRunner.Result.self) { group in
            for p in 0..<processes {
                group.addTask { try await fetch(p * perProcess ..< (p + 1) * perProcess, name: "items\(p).json") }
            }
            for try await result in group { #expect(result.status == 0, "\(result.stderr)") }
        }
        let json = try await cli.run(["stats", "--json", "--cache-dir", cacheDir])
        #expect(try number(json.stdout, "total", "transfers", "bySource", "network") == processes * perProcess)
        #expect(try number(json.stdout, "total", "bytes", "downloaded") == processes * perProcess * Self.thumbnailSize)
        #expect(try number(json.stdout, "total", "originalsNotDownloaded", "total") == processes * perProcess)
    }

    @Test func aDamagedDayIsReportedThenSetAsideByTheNextFetch() async throws {
        _ = try DiskCache(folder: cacheDir)
        let path = try cli.home.write("{\"format\": torn", to: "cache/usage/\(today).json")
        let stats = try await cli.run(["stats", "--cache-dir", cacheDir])
        #expect(stats.status == 65)
        #expect(stats.stderr.hasPrefix("imgpolicy: \(path): damaged usage record (not JSON"), "\(stats.stderr)")
        #expect(!stats.stderr.contains("SyntaxError"), "an internal type name in a message: \(stats.stderr)")
        #expect(stats.stderr.split(separator: "\n").count == 1)
        #expect(stats.stdout.contains("nothing recorded"))
        let fetch = try await fetch(0..<1)
        #expect(fetch.status == 0)
        #expect(fetch.stderr.hasPrefix("imgpolicy: \(path): damaged usage record (not JSON"), "\(fetch.stderr)")
        #expect(fetch.stderr.contains("; set aside as \(today).json.damaged-"))
        #expect(try cli.home.list("cache/usage").contains { $0.hasPrefix("\(today).json.damaged-") })
        let after = try await cli.run(["stats", "--json", "--cache-dir", cacheDir])
        #expect(after.status == 0 && after.stderr.isEmpty)
        #expect(try number(after.stdout, "total", "bytes", "downloaded") == Self.thumbnailSize)
    }

    /// A day file holding Int64.max (no real usage) is refused as damaged, naming the file, the
    /// line and the key, exit 65; nothing saturated is printed. Two days each at the bound count
    /// only the first. `--fetch` then sets the damaged day aside.
    @Test func countsNoRealUsageReachesAreRefusedNamingTheFileLineAndKey() async throws {
        _ = try DiskCache(folder: cacheDir)
        let load = #"{"link":"cellular","variant":"original","source":"network","bytes":BYTES,"transfers":1}"#
        func day(_ day: UsageDay, bytes: String) -> String {
            #"{"format":"imgpolicy usage 1","day":"\#(day)","loads":[\#(load.replacingOccurrences(of: "BYTES", with: bytes))],"originalsNotDownloaded":{},"retries":{}}"#
        }
        let path = try cli.home.write(day(today, bytes: "9223372036854775807"), to: "cache/usage/\(today).json")
        let stats = try await cli.run(["stats", "--cache-dir", cacheDir])
        #expect(stats.status == 65)
        #expect(stats.stderr == "imgpolicy: \(path): damaged usage record (line 1: \"loads\" item 1, \"bytes\": 9223372036854775807 is more than "
                + "9007199254740991, more than any real usage)\n")
        #expect(stats.stdout.contains("nothing recorded") && !stats.stdout.contains("9223"))
        // Two days at the bound: the later one is not counted.
        let yesterday = UsageDay(parsing: "2026-11-01")!
        try cli.home.write(day(yesterday, bytes: "9007199254740991"), to: "cache/usage/2026-11-01.json")
        try cli.home.write(day(today, bytes: "9007199254740991"), to: "cache/usage/\(today).json")
        let both = try await cli.run(["stats", "--json", "--since", "2026-11-01", "--cache-dir", cacheDir])
        #expect(both.status == 65)
        if today != yesterday {
            #expect(try number(both.stdout, "total", "bytes", "downloaded") == 9_007_199_254_740_991)
            #expect(both.stderr.contains("\(path): damaged usage record (not counted: with it the ledger's total \"bytes\" of all loads would be more than 9007199254740991"))
        }
    }

    enum Special: String, CaseIterable { case fifo, symbolicLink }

    /// A FIFO or a link to a file outside the folder in place of today's record: `stats` and
    /// `--fetch` refuse it in one line naming it, never block, and never write outside.
    @Test(arguments: Special.allCases)
    func aFIFOOrLinkInPlaceOfTheRecordIsRefused(_ special: Special) async throws {
        _ = try DiskCache(folder: cacheDir)
        try FileManager.default.createDirectory(atPath: cacheDir + "/usage", withIntermediateDirectories: true)
        let path = cacheDir + "/usage/\(today).json"
        let outside = try cli.home.write("my own file\n", to: "outside.json")
        switch special {
        case .fifo: #expect(mkfifo(path, 0o600) == 0)
        case .symbolicLink: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside)
        }
        let kind = special == .fifo ? "a FIFO" : "a symbolic link"
        let stats = try await cli.run(["stats", "--cache-dir", cacheDir])
        #expect(stats.status == 66)
        #expect(stats.stderr == "imgpolicy: \(path): is \(kind), not a regular file; the usage ledger never reads or writes through it (remove it)\n")
        let fetch = try await fetch(0..<1)
        #expect(fetch.status == 74)
        #expect(fetch.stdout.hasPrefix("i0: load thumbnail from network"))  // the image was still delivered
        #expect(fetch.stderr == "imgpolicy: \(path): is \(kind), not a regular file; the usage ledger never reads or writes through it (remove it)\n")
        #expect(try cli.home.read("outside.json") == "my own file\n")
    }

    /// `kill -9` at random moments of `--fetch` runs recording into one ledger (spread over a
    /// whole run's duration, so some land while the record is written): `stats` never finds a
    /// half-written or damaged record, and the next run sweeps what a killed writer left.
    @Test func killedRecordingsNeverLeaveAHalfWrittenRecord() async throws {
        _ = try await fetch(0..<5)  // cached now: each later run reads the disk and records
        let items = try items(0..<5, name: "k.json")
        let arguments = ["--network", "cellular", "--item", items, "--fetch", "--cache-dir", cacheDir]
        let environment = ["XDG_CONFIG_HOME": cli.home.file("config"), "HOME": cli.home.path]
        let start = ContinuousClock.now
        #expect(try await cli.run(arguments).status == 0)
        let runTime = ContinuousClock.now - start
        let microseconds = Int(runTime.components.seconds) * 1_000_000 + Int(runTime.components.attoseconds / 1_000_000_000_000)
        var generator = SeededGenerator(seed: 8, label: "stats: kill moments")
        var killedRunning = 0
        for round in 0..<30 {
            // Within the first half of a run as long as the measured one (which, measured through the
            // runner on a loaded machine, is often longer than a bare run): most kills land mid-run.
            let delay = UInt32(clamping: Int.random(in: 0...max(1, microseconds / 2), using: &generator))
            let wasRunning = try await offThePool { () -> Bool in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: PackagePaths.executable)
                process.arguments = arguments
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(delay)
                let running = process.isRunning
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return running
            }
            if wasRunning { killedRunning += 1 }
            let stats = try await cli.run(["stats", "--json", "--cache-dir", cacheDir])
            #expect(stats.status == 0 && stats.stderr.isEmpty, "round \(round): \(stats.stderr)")
        }
        #expect(killedRunning > 0, "no kill landed while a run was running")
        #expect(try await cli.run(arguments).status == 0)
        #expect(try cli.home.list("cache/usage").allSatisfy { !$0.hasPrefix(".") && !$0.contains("damaged") })
    }
}
