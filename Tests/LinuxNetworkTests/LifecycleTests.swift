import Foundation
import Testing
import TestSupport

/// Nothing leaks: providers started and ended every way (async and sync shutdown, dropped,
/// consumers that stop listening or are still listening) leave no thread, socket or eventfd.
/// Runs in a probe process of its own so that other tests' descriptors do not blur the count.
struct LifecycleTests {
    @Test func providersLeaveNoThreadSocketOrEventfd() async throws {
        try checkLifecycle(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/imgpolicy-no-bus"])
    }

    @Test(.enabled(if: PrivateSystemBus.isAvailable, Comment(rawValue: PrivateSystemBus.unavailableReason ?? "")))
    func providersConnectedToABusLeaveNothingEither() async throws {
        let bus = try await PrivateSystemBus()
        try await bus.startNetworkManager(metered: 1)
        try checkLifecycle(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    func checkLifecycle(environment: [String: String]) throws {
        let executable = ProbeProcess.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the package first: \(executable) is missing")
        let result = try ProcessResult.run(executable, ["lifecycle", "30"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        let report = object.compactMapValues { $0 as? Int }
        #expect(report["loopThreads"] == 0, "\(report)")
        // Every count must be there: two missing keys would otherwise compare equal (nil == nil).
        let sockets = try #require(report["sockets"], "\(report)"), socketsBefore = try #require(report["socketsBefore"], "\(report)")
        let eventfds = try #require(report["eventfds"], "\(report)"), eventfdsBefore = try #require(report["eventfdsBefore"], "\(report)")
        #expect(sockets == socketsBefore, "\(report)")
        #expect(eventfds == eventfdsBefore, "\(report)")
    }
}
