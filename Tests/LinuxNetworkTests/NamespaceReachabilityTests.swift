import Foundation
import Testing
import TestSupport

/// `LinuxReachability` inside network namespaces made by the tests: real netlink events from real
/// links, addresses and routes. Skipped, loudly, where namespaces cannot be made (not root).
@Suite(.enabled(if: NetworkNamespace.isAvailable, Comment(rawValue: NetworkNamespace.unavailableReason ?? "")))
struct NamespaceReachabilityTests {
    // The provider never polls: a change reaches the consumer only through netlink events, so
    // each state awaited below proves its event arrived. How fast is measured by the benchmark
    // (scripts/bench-reachability.sh, goal 100 ms), not timed here on a shared machine.

    @Test func eventsDriveTheStateThroughLinksRoutesAndAddresses() async throws {
        let namespace = try NetworkNamespace()
        let probe = try ProbeProcess(in: namespace)
        #expect(try await probe.waitForState(number: 1).state == "offline")  // only lo, down

        // A link named like a modem's, an address and a default route: cellular.
        try namespace.addLink("rmnet0", peer: "peer0", address: "10.200.0.1")
        try namespace.ip("route", "add", "default", "via", "10.200.0.2", "dev", "rmnet0", "metric", "100")
        var change = try await probe.waitForState(number: 2)
        #expect(change.state == "cellular,expensive")

        // The default route moves to another interface (a lower metric): a veth is unknown.
        try namespace.addLink("eth7", peer: "peer7", address: "10.201.0.1")
        try namespace.ip("route", "add", "default", "via", "10.201.0.2", "dev", "eth7", "metric", "10")
        change = try await probe.waitForState(number: 3)
        #expect(change.state == "unknown")

        // And back when that route goes.
        try namespace.ip("route", "del", "default", "via", "10.201.0.2", "dev", "eth7", "metric", "10")
        change = try await probe.waitForState(number: 4)
        #expect(change.state == "cellular,expensive")

        // The link goes down: offline.
        try namespace.ip("link", "set", "rmnet0", "down")
        change = try await probe.waitForState(number: 5)
        #expect(change.state == "offline")

        // Up again with its route, then the last address goes away: offline.
        try namespace.ip("link", "set", "rmnet0", "up")
        try namespace.ip("route", "add", "default", "via", "10.200.0.2", "dev", "rmnet0", "metric", "100")
        #expect(try await probe.waitForState(number: 6).state == "cellular,expensive")
        try namespace.ip("addr", "flush", "dev", "rmnet0")
        change = try await probe.waitForState(number: 7)
        #expect(change.state == "offline")

        let end = try await probe.finish()
        #expect(probe.states.count == 7, "\(probe.states)")  // only changed states, never a repeat
        #expect(end["loopThreads"] == 0 && end["sockets"] == end["socketsBefore"] && end["eventfds"] == end["eventfdsBefore"], "\(end)")
    }

    @Test func aFlappingLinkIsDebouncedIntoOneChange() async throws {
        let namespace = try NetworkNamespace()
        try namespace.addLink("rmnet0", peer: "peer0", address: "10.200.0.1")
        try namespace.ip("route", "add", "default", "via", "10.200.0.2", "dev", "rmnet0")
        // A quiet period longer than the gap between two `ip` processes on a loaded machine.
        let probe = try ProbeProcess(in: namespace, quietMilliseconds: 400, maximumMilliseconds: 60_000)
        #expect(try await probe.waitForState(number: 1).state == "cellular,expensive")
        let before = try await probe.activity()

        // 20 flaps, one `ip` process each (milliseconds apart: less than the quiet period, so that
        // without the debounce each would be looked at), ending down.
        for _ in 0..<20 {
            try namespace.ip("link", "set", "rmnet0", "down")
            try namespace.ip("link", "set", "rmnet0", "up")
        }
        try namespace.ip("link", "set", "rmnet0", "down")
        #expect(try await probe.waitForState(number: 2).state == "offline")
        // The burst took microseconds: the change published a quiet period after its last message
        // means every message of it has been read.
        let after = try await probe.activity()
        let messages = (after["messages"] ?? 0) - (before["messages"] ?? 0)
        let detections = (after["detections"] ?? 0) - (before["detections"] ?? 0)
        #expect(messages >= 40, "a flap gives several messages: \(after)")
        #expect(detections <= 5, "\(messages) messages gave \(detections) detections")
        #expect(probe.states == ["cellular,expensive", "offline"])
        let end = try await probe.finish()
        #expect(end["loopThreads"] == 0 && end["sockets"] == end["socketsBefore"] && end["eventfds"] == end["eventfdsBefore"], "\(end)")
    }

    /// Issue 17: the default route moving between two links of one kind changes no state, but
    /// it changes what `network --watch` reports (the interface): it printed nothing; it prints it.
    @Test func imgpolicyNetworkWatchPrintsTheDefaultRouteMovingToAnotherLinkOfTheSameKind() async throws {
        let namespace = try NetworkNamespace()
        try namespace.addLink("eth5", peer: "peer5", address: "10.205.0.1")
        try namespace.addLink("eth6", peer: "peer6", address: "10.206.0.1")
        try namespace.ip("route", "add", "default", "via", "10.205.0.2", "dev", "eth5", "metric", "100")
        let watcher = try ProbeProcess(in: namespace, command: [PackagePaths.executable, "network", "--watch", "--json"],
                                       environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/imgpolicy-no-bus"])
        defer { watcher.stop() }
        #expect(try await watcher.waitForState(number: 1).state == "unknown")
        #expect(watcher.objects.first?["interface"] == "eth5")
        try namespace.ip("route", "add", "default", "via", "10.206.0.2", "dev", "eth6", "metric", "10")
        #expect(try await watcher.waitForState(number: 2).state == "unknown")
        #expect(watcher.objects.dropFirst().first?["interface"] == "eth6", "\(watcher.objects)")
    }

    @Test func imgpolicyNetworkWatchPrintsOneLinePerChange() async throws {
        let namespace = try NetworkNamespace()
        let watcher = try ProbeProcess(in: namespace, command: [PackagePaths.executable, "network", "--watch", "--json"],
                                       environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/imgpolicy-no-bus"])
        defer { watcher.stop() }
        #expect(try await watcher.waitForState(number: 1).state == "offline")
        try namespace.addLink("wwan0", peer: "peer0", address: "10.200.0.1")
        try namespace.ip("route", "add", "default", "via", "10.200.0.2", "dev", "wwan0")
        #expect(try await watcher.waitForState(number: 2).state == "cellular,expensive")
        try namespace.ip("link", "set", "wwan0", "down")
        #expect(try await watcher.waitForState(number: 3).state == "offline")
        let line = try #require(watcher.objects.dropFirst().first)
        for key in ["kind", "expensive", "constrained", "roaming", "captive", "interface", "reason"] {
            #expect(line[key] != nil, "no \(key) in \(line)")
        }
        #expect(line["kind"] == "cellular" && line["interface"] == "wwan0" && line["roaming"] == "0")
        #expect(watcher.states == ["offline", "cellular,expensive", "offline"])
    }
}
