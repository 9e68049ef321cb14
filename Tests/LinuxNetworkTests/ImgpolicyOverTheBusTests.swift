import Foundation
import Testing
import TestSupport

/// The `imgpolicy` process itself against a (private or silent) system bus: a bus that never
/// answers costs about a call timeout, not sd-bus's 90 s.
@Suite(.enabled(if: PrivateSystemBus.isAvailable, Comment(rawValue: PrivateSystemBus.unavailableReason ?? "")))
struct ImgpolicyOverTheBusTests {
    static func run(_ arguments: [String], bus address: String) async throws -> ProcessResult {
        try await offThePool {
            try ProcessResult.run(PackagePaths.executable, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address],
                                  workingDirectory: PackagePaths.root)
        }
    }

    @Test func aBusThatNeverAnswersCostsAboutACallTimeout() async throws {
        let folder = TemporaryFolder()
        let socket = folder.file("silent_bus")
        // Accepts every connection and never writes a byte.
        let silent = Process()
        silent.executableURL = URL(fileURLWithPath: PrivateSystemBus.python)
        silent.arguments = ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen(16)
            held = []
            while True:
                held.append(s.accept())
            """, socket]
        silent.standardOutput = FileHandle.nullDevice
        try silent.run()
        defer {
            kill(silent.processIdentifier, SIGKILL)
            silent.waitUntilExit()
        }
        #expect(await waitUntil { FileManager.default.fileExists(atPath: socket) })
        let started = ContinuousClock.now
        let result = try await Self.run(["network", "--json"], bus: "unix:path=" + socket)
        // Generous: the old code took 90 s; the point is that both finished, with the reason.
        #expect(started.duration(to: .now) < .seconds(20))
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        let sources = try #require(object["sources"] as? [String: Any])
        for name in ["metered", "captive", "roaming"] {
            let fact = try #require(sources[name] as? [String: Any])
            #expect(fact["value"] is NSNull)
            #expect(fact["explanation"] as? String == "the bus at unix:path=\(socket) ($DBUS_SYSTEM_BUS_ADDRESS) did not answer within 1 s",
                    "\(fact)")
        }
    }
}
