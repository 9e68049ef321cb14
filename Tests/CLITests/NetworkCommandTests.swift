import Foundation
import Testing
import TestSupport

/// `imgpolicy network --json`: every key, each source and what it said.
struct NetworkCommandTests {
    let cli = CLIRunner()
    static let noBus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/imgpolicy-no-bus"]

    func fakeModemTree() throws -> TemporaryFolder {
        let root = cli.home
        try root.write("1\n", to: "sys/devices/pci0/net/wwan0/type")
        try root.write("DEVTYPE=wwan\n", to: "sys/devices/pci0/net/wwan0/uevent")
        try root.write("up\n", to: "sys/devices/pci0/net/wwan0/operstate")
        try root.write("1\n", to: "sys/devices/pci0/net/wwan0/carrier")
        try root.link("sys/class/net/wwan0", to: "../../devices/pci0/net/wwan0")
        try root.write("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nwwan0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\n",
                       to: "proc/net/route")
        return root
    }

    @Test func jsonHasEveryKeyAndEachSource() async throws {
        let root = try fakeModemTree()
        let result = try await cli.run(["network", "--root", root.path, "--json"], environment: Self.noBus)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(object["kind"] as? String == "cellular")
        #expect(object["expensive"] as? Bool == true)
        #expect(object["constrained"] as? Bool == false && object["roaming"] as? Bool == false && object["captive"] as? Bool == false)
        #expect(object["interface"] as? String == "wwan0")
        #expect((object["reason"] as? String)?.contains("wwan0 is cellular") == true)
        let sources = try #require(object["sources"] as? [String: Any])
        let metered = try #require(sources["metered"] as? [String: Any])
        #expect(metered["value"] is NSNull)
        #expect((metered["explanation"] as? String)?.contains("no system bus at unix:path=/nonexistent/imgpolicy-no-bus") == true)
        #expect(result.stdout.split(separator: "\n").count == 1)
    }

    @Test func textNamesEachSource() async throws {
        let root = try fakeModemTree()
        let result = try await cli.run(["network", "--root", root.path], environment: Self.noBus)
        #expect(result.stdout.hasPrefix("network: cellular,expensive\n"), "\(result.stdout)")
        #expect(result.stdout.contains("sources:\n  kernel (sysfs, routes): cellular,expensive via wwan0\n"))
        #expect(result.stdout.contains("  roaming (ModemManager): unknown: no system bus"))
    }

    /// Issue 16, item 8: `network --watch | head -1` used to run until the next change (only the
    /// next line's SIGPIPE ended it). The watcher notices its standard output closing and exits 0.
    @Test func watchExitsAsSoonAsItsStandardOutputCloses() async throws {
        let root = try fakeModemTree()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.executable)
        process.arguments = ["network", "--watch", "--root", root.path]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "IMGPOLICY_NETWORK")
        process.environment = environment.merging(Self.noBus) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try? output.fileHandleForWriting.close()
        // `head -1`: read the first line, then close the pipe.
        let reader = output.fileHandleForReading
        let first = try await offThePool { () -> String in
            var bytes: [UInt8] = []
            while !bytes.contains(10) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes += chunk
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(first.hasPrefix("cellular,expensive interface=wwan0"), "\(first)")
        try reader.close()
        #expect(await waitUntil(timeout: .seconds(10)) { !process.isRunning }, "the watcher still runs after its reader left")
        if !process.isRunning { #expect(process.terminationStatus == 0 && process.terminationReason == .exit) }
    }

    /// `--root` that names no folder used to read as an empty tree: `network: offline`, exit 0.
    @Test(arguments: ["missing", "file", "fifo"])
    func aRootThatIsNotAFolderIsRefused(_ kind: String) async throws {
        let root: String
        switch kind {
        case "missing": root = cli.home.file("nonexistent")
        case "file": root = try cli.home.write("x", to: "a-file")
        default:
            root = cli.home.file("a-fifo")
            #expect(mkfifo(root, 0o600) == 0)
        }
        for arguments in [["network", "--root", root], ["network", "--root", root, "--json"], ["network", "--root", root, "--watch"]] {
            let result = try await cli.run(arguments, environment: Self.noBus)
            #expect(result.status == 66, "\(arguments): \(result.stdout)")
            #expect(result.stdout.isEmpty)
            let what = kind == "missing" ? "no such folder" : kind == "file" ? "is a regular file, not a folder" : "is a FIFO, not a folder"
            #expect(result.stderr == "imgpolicy: --root \(root): \(what)\n")
        }
    }

    @Test func watchWithTheVariableSetPrintsOnce() async throws {
        let result = try await cli.run(["network", "--watch", "--json"], environment: Self.noBus.merging(["IMGPOLICY_NETWORK": "cellular,roaming"]) { $1 })
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(object["roaming"] as? Bool == true && object["expensive"] as? Bool == true)
        #expect(object["source"] as? String == "IMGPOLICY_NETWORK")
    }
}

/// `imgpolicy network` as text: nothing from outside reaches the terminal raw.
struct NetworkCommandTextTests {
    let cli = CLIRunner()

    @Test func everyTextLineIsEscaped() async throws {
        let result = try await cli.run(["network"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x\u{1B}[2J"])
        #expect(!result.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result.stdout.debugDescription)")
        #expect(result.stdout.contains(#"unix:path=/x\u{1B}[2J"#), "\(result.stdout)")
    }
}
