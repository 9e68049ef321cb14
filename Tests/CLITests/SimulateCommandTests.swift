import Foundation
import Testing
import TestSupport

/// `imgpolicy simulate` as a process: small runs (60 items, a fast scroll, a short script)
/// against its own loopback server.
struct SimulateCommandTests {
    let cli = CLIRunner()

    /// A small, fast run: about two seconds per pass.
    static func arguments(script: String, seed: String = "1", extra: [String] = []) -> [String] {
        ["simulate", "--items", "60", "--visible", "8", "--rows-per-second", "40", "--latency", "5-25",
         "--original-bytes", "30000", "--thumbnail-bytes", "3000", "--network-script", script, "--seed", seed, "--json"] + extra
    }

    func runJSON(_ arguments: [String]) async throws -> (status: Int32, object: [String: Any]) {
        let result = try await cli.run(arguments)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                  "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1, "one JSON object on one line")
        return (result.status, object)
    }

    static func bytes(_ object: [String: Any], _ kind: String, _ variant: String) -> Int {
        let byNetwork = (object["bytes"] as? [String: Any])?["byNetwork"] as? [String: Any]
        return ((byNetwork?[kind] as? [String: Any])?[variant] as? Int) ?? 0
    }

    @Test func jsonHasEveryKeyAndTheListMakesNoWrongStaleOrDuplicateDelivery() async throws {
        // Two seconds of cellular (the list's first screen loads then even on a loaded machine), then Wi-Fi.
        let (status, object) = try await runJSON(Self.arguments(script: "cellular@0s,wifi@2s", extra: ["--items", "120"]))
        #expect(status == 0, "\(object["problems"] ?? "")")
        for key in ["wrongSlotDeliveries", "duplicateTransfers", "staleDeliveries", "upgrades", "bytes", "timeToVisibleMs",
                    "firstScreenMs", "upgradeLatencyMs", "baseline", "goals", "setup"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["list"] as? String == "ImageList")
        #expect(object["wrongSlotDeliveries"] as? Int == 0)
        #expect(object["staleDeliveries"] as? Int == 0)
        #expect(object["duplicateTransfers"] as? Int == 0)
        let ttv = try #require(object["timeToVisibleMs"] as? [String: Any])
        for key in ["p50", "p95", "max"] { #expect(ttv[key] is NSNumber, "timeToVisibleMs.\(key)") }
        #expect((ttv["count"] as? Int ?? 0) > 0)
        let upgrade = try #require(object["upgradeLatencyMs"] as? [String: Any])
        #expect(upgrade["p50"] is NSNumber && upgrade["max"] is NSNumber)
        let total = try #require((object["bytes"] as? [String: Any])?["total"] as? Int)
        #expect(total == ["cellular", "wifi"].flatMap { kind in ["original", "thumbnail"].map { Self.bytes(object, kind, $0) } }.reduce(0, +))
        // The default policy loads no original on cellular; the naive list loads nothing else.
        #expect(Self.bytes(object, "cellular", "original") == 0)
        #expect(Self.bytes(object, "cellular", "thumbnail") > 0)
        let baseline = try #require(object["baseline"] as? [String: Any])
        #expect(baseline["timeToVisibleMs"] is [String: Any])
        #expect(Self.bytes(baseline, "cellular", "original") > Self.bytes(object, "cellular", "thumbnail"))
        #expect(Self.bytes(baseline, "cellular", "thumbnail") == 0)
        let goals = try #require(object["goals"] as? [[String: Any]])
        #expect(goals.count == 7)
        // First: no load failed for want of resources (else nothing else means anything).
        #expect(goals.first?["name"] as? String == "no load failed for want of resources (descriptors, threads, memory, disk)")
        #expect(goals.first?["met"] as? Bool == true)
        // The first screen: 8 rows on screen, 6 connections to the host: the goal does not apply.
        let firstScreen = try #require(object["firstScreenMs"] as? [String: Any])
        #expect((firstScreen["count"] as? Int ?? 0) + (firstScreen["leftWithoutImage"] as? Int ?? 0) == 8)
        #expect(goals.last { ($0["name"] as? String)?.hasPrefix("first screen") == true }?["met"] is NSNull)
        #expect(goals.first?["met"] as? Bool == true)
    }

    @Test func theReadableReportChecksTheGoals() async throws {
        var arguments = Self.arguments(script: "cellular@0s,wifi@1s")
        arguments.removeLast()   // --json
        let result = try await cli.run(arguments)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("SDK (ImageList):"))
        #expect(result.stdout.contains("baseline (naive"))
        #expect(result.stdout.contains("no wrong-slot, stale or duplicate: 0 wrong-slot, 0 stale, 0 duplicate"))
        #expect(result.stdout.contains("≥ 80 % fewer bytes than the baseline on cellular"))
    }

    @Test(.disabled(if: runningUnderThreadSanitizer, "how soon the list hears offline is timing; runs in scripts/test.sh"))
    func offlineInTheMiddleStopsTheNetworkAndDeliversNothingWrong() async throws {
        let (status, object) = try await runJSON(Self.arguments(script: "cellular@0s,offline@600ms,wifi@1400ms"))
        #expect(status == 0, "\(object["problems"] ?? "")")
        #expect(object["wrongSlotDeliveries"] as? Int == 0 && object["staleDeliveries"] as? Int == 0 && object["duplicateTransfers"] as? Int == 0)
        // The list asks nothing of the network while offline (the server drops and counts such requests).
        #expect(object["offlineRequests"] as? Int == 0)
        let shown = try #require(object["rowsShown"] as? [String: Any])
        #expect((shown["offline"] as? Int ?? 0) > 0, "rows were on screen while offline")
    }

    @Test func whatTheSeedDecidesIsTheSameForTheSameSeed() async throws {
        let script = "wifi@0s"
        let first = try await runJSON(Self.arguments(script: script, seed: "7")).object
        let again = try await runJSON(Self.arguments(script: script, seed: "7")).object
        let other = try await runJSON(Self.arguments(script: script, seed: "8")).object
        func decided(_ object: [String: Any]) -> [String?] {
            let setup = object["setup"] as? [String: Any]
            return [(setup?["plan"] as? [String: Any])?["digest"] as? String, setup?["latencyDigest"] as? String]
        }
        #expect(decided(first).allSatisfy { $0 != nil })
        #expect(decided(first) == decided(again))
        #expect(decided(first)[0] != decided(other)[0] && decided(first)[1] != decided(other)[1])
    }

    static let usageErrors: [([String], String)] = [
        (["--latency", "80-20"], "--latency 80-20:"),
        (["--latency", "fast"], "--latency fast:"),
        (["--latency", "20-99999"], "--latency 20-99999:"),
        (["--network-script", "wifi"], "--network-script wifi: \"wifi\": every entry needs a time"),
        (["--network-script", "wifi@5s"], "the first entry must be at 0s"),
        (["--network-script", "cellular@0s,wifi@0s"], "times must increase"),
        (["--network-script", "moon@0s"], "\"moon\" is not a network state"),
        (["--network-script", "wifi@0s,cellular@3601s"], "is later than the longest script, 3600 s"),
        (["--items", "100000", "--rows-per-second", "1"], "--items 100000 at --rows-per-second 1.0: the scroll would last 100000 s"),
        (["--network-script", "wifi@0s,cellular@soon"], "\"soon\" is not a time"),
        (["--policy", "no-such-policy"], "no policy named \"no-such-policy\""),
        (["--set", "noSuchSetting=true"], "--set noSuchSetting=true: the policy \"default\" reads no setting \"noSuchSetting\""),
        (["--set", "alwaysDownloadOriginalImage=maybe"], "is not a boolean"),
        (["--items", "0"], "--items 0:"),
        (["--original-bytes", "10"], "--original-bytes 10:"),
        (["--connections-per-host", "0"], "--connections-per-host 0: expected a count from 1 to 64"),
        (["--seed=-1"], "--seed -1:"), (["--seed", "18446744073709551616"], "--seed 18446744073709551616:"),
    ]

    @Test(arguments: usageErrors)
    func aUsageErrorIsOneLineNamingTheFlag(_ arguments: [String], _ message: String) async throws {
        let result = try await cli.run(["simulate"] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("imgpolicy: "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}

/// A simulation stopped from outside (Ctrl-C, `timeout`, a CI runner) leaves nothing behind.
struct SimulateStoppedTests {
    let cli = CLIRunner()

    // SIGINT (Ctrl-C) takes the same path; it is not tried here because the test runner's
    // children inherit it blocked (a shell's `kill -INT` exits 130 and leaves nothing).
    @Test(.disabled(if: runningUnderThreadSanitizer, "signal timing; runs in scripts/test.sh"), arguments: [SIGTERM, SIGHUP])
    func aStoppedSimulationRemovesItsTemporaryCache(_ signalNumber: Int32) async throws {
        let tmp = TemporaryFolder()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.executable)
        // Long enough (about 15 s a pass) to be stopped in the middle even on a loaded machine.
        process.arguments = SimulateCommandTests.arguments(script: "wifi@0s", extra: ["--items", "600"])
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmp.path
        env["HOME"] = tmp.path
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Watched off the cooperative pool, which a loaded suite can starve.
        // The signal is sent by the watching thread as soon as the folder is seen: a starved
        // cooperative pool must not let the run finish its pass (or the whole run) first.
        let started = try await offThePool { () -> Bool in
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, process.isRunning {
                if ((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).contains(where: { $0.hasPrefix("imgpolicy-simulate-") }) {
                    kill(process.processIdentifier, signalNumber)
                    return true
                }
                usleep(2_000)
            }
            return false
        }
        #expect(started, "the simulation never made its temporary cache in TMPDIR")
        try await offThePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 128 + signalNumber)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
        #expect(!left.contains { $0.hasPrefix("imgpolicy-simulate-") }, "left behind: \(left)")
    }

    /// Issue 16: a simulation killed with SIGKILL left `$TMPDIR/imgpolicy-simulate-XXXXXX` behind
    /// (a cache that grows toward its capacity). The next run removes the folders of runs that are
    /// provably dead, and only those: a live run's, a folder without the run's owner record, and
    /// (as root) another user's stay.
    @Test(.disabled(if: runningUnderThreadSanitizer, "kills by timing; runs in scripts/test.sh"))
    func aKilledSimulationsFolderIsRemovedByTheNextRun() async throws {
        let tmp = TemporaryFolder()
        @Sendable func folders() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).filter { $0.hasPrefix("imgpolicy-simulate-") })
        }
        let killed = try startLongSimulation(tmp: tmp.path)
        // Killed as soon as its folder is seen, by the watching thread: a starved cooperative pool
        // must not let the run reach the end of its pass (which removes the folder) first.
        let dead = try #require(try await waitForNewFolder(besides: [], in: tmp.path, folders) { kill(killed.processIdentifier, SIGKILL) })
        try await offThePool { killed.waitUntilExit() }
        #expect(folders() == [dead], "a killed run leaves its folder (nothing can remove it then)")
        // Not the run's: no owner record.
        try tmp.write("notes", to: "imgpolicy-simulate-foreign/notes.txt")
        var others: Set<String> = ["imgpolicy-simulate-foreign"]
        if getuid() == 0 {
            // Another user's copy of the dead folder: its run is dead all the same, but it is not ours.
            let other = "imgpolicy-simulate-nobody"
            #expect(try ProcessResult.run("/bin/cp", ["-a", tmp.file(dead), tmp.file(other)]).status == 0)
            #expect(try ProcessResult.run("/bin/chown", ["-R", "65534:65534", tmp.file(other)]).status == 0)
            others.insert(other)
        }
        // Stillborn: a run killed between mkdtemp and its record left an empty folder (or one with
        // an empty record) a minute ago; a run that is starting now has one too, and keeps it.
        for (name, age) in [("imgpolicy-simulate-stillborn", 120), ("imgpolicy-simulate-emptyrecord", 120), ("imgpolicy-simulate-starting", 0)] {
            #expect(mkdir(tmp.file(name), 0o700) == 0)
            if name.hasSuffix("emptyrecord") { #expect(FileManager.default.createFile(atPath: tmp.file(name) + "/owner", contents: Data())) }
            var times = [timeval(tv_sec: time(nil) - age, tv_usec: 0), timeval(tv_sec: time(nil) - age, tv_usec: 0)]
            #expect(utimes(tmp.file(name), &times) == 0)
        }
        others.insert("imgpolicy-simulate-starting")
        let live = try startLongSimulation(tmp: tmp.path)
        defer { if live.isRunning { kill(live.processIdentifier, SIGKILL) } }
        let liveFolder = try #require(try await waitForNewFolder(besides: folders(), in: tmp.path, folders))
        let result = try await cli.run(SimulateCommandTests.arguments(script: "wifi@0s", extra: ["--items", "20"]), environment: ["TMPDIR": tmp.path])
        #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
        #expect(folders() == others.union([liveFolder]), "\(folders())")
        kill(live.processIdentifier, SIGTERM)
        try await offThePool { live.waitUntilExit() }
        #expect(folders() == others)
    }

    /// A simulation of about 100 s a pass (it is killed long before), its temporary folder in `tmp`.
    private func startLongSimulation(tmp: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.executable)
        process.arguments = SimulateCommandTests.arguments(script: "wifi@0s", extra: ["--items", "4000"])
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmp
        env["HOME"] = tmp
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The first folder listed by `folders` that is not in `known` (nil after a minute without
    /// one); `then` runs on the watching thread as soon as it is seen.
    private static func hasOwnerRecord(_ folder: String) -> Bool {
        ((try? FileManager.default.attributesOfItem(atPath: folder + "/owner"))?[.size] as? Int ?? 0) > 0
    }

    private func waitForNewFolder(besides known: Set<String>, in base: String, _ folders: @escaping @Sendable () -> Set<String>,
                                  then action: @escaping @Sendable () -> Void = {}) async throws -> String? {
        try await offThePool { () -> String? in
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                // A folder counts once its owner's record is written (a run killed in the instant
                // before is another case: a stillborn folder, swept only after a minute).
                if let new = folders().subtracting(known).first(where: { Self.hasOwnerRecord(base + "/" + $0) }) {
                    action()
                    return new
                }
                usleep(2_000)
            }
            return nil
        }
    }
}
