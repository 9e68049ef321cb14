import Foundation
import Testing
import TestSupport

/// `reachability-probe watch` (or `imgpolicy network --watch --json`) running inside a namespace
/// (`ip netns exec`), its JSON lines collected as they come.
final class ProbeProcess {
    /// The built probe.
    static var executable: String { PackagePaths.products + "/reachability-probe" }

    private let process: Process
    private let input: Pipe
    private let lines = LockedList<[String: String]>()
    private let arrivals = LockedList<ContinuousClock.Instant>()

    /// Starts the probe in `namespace`.
    convenience init(in namespace: NetworkNamespace, quietMilliseconds: Int = 50, maximumMilliseconds: Int = 500) throws {
        try self.init(in: namespace, command: [Self.executable, "watch", "\(quietMilliseconds)", "\(maximumMilliseconds)"])
    }

    /// Runs `command` (an executable and its arguments) in `namespace`.
    init(in namespace: NetworkNamespace, command: [String], environment: [String: String] = [:]) throws {
        try #require(FileManager.default.isExecutableFile(atPath: command[0]), "build the package first: \(command[0]) is missing")
        process = Process()
        process.executableURL = URL(fileURLWithPath: NetworkNamespace.ip ?? "ip")
        process.arguments = ["netns", "exec", namespace.name] + command
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "IMGPOLICY_NETWORK")
        env.merge(environment) { _, new in new }
        process.environment = env
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [lines, arrivals] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[pending.index(after: newline)...])
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                        arrivals.append(.now)
                        lines.append(object.mapValues { "\($0)" })
                    }
                }
            }
        }
    }

    /// Every line so far.
    var objects: [[String: String]] { lines.values }

    /// The published states so far, in order (the probe's `state` events, imgpolicy's objects).
    var states: [String] { objects.filter(Self.isState).compactMap { $0["state"] } }

    private static func isState(_ object: [String: String]) -> Bool {
        object["state"] != nil && (object["event"] == nil || object["event"] == "state")
    }

    /// Waits until the probe has published `count` states; returns the last, and when it arrived.
    func waitForState(number count: Int) async throws -> (state: String, arrival: ContinuousClock.Instant) {
        let arrived = await waitUntil { self.states.count >= count }
        try #require(arrived, "the probe published \(states) (waited for state #\(count))")
        let all = objects
        let index = all.indices.filter { Self.isState(all[$0]) }[count - 1]
        return (all[index]["state"] ?? "", arrivals.values[index])
    }

    /// The probe's counters now.
    func activity() async throws -> [String: Int] {
        let before = objects.count { $0["event"] == "activity" }
        input.fileHandleForWriting.write(Data("activity\n".utf8))
        let arrived = await waitUntil { self.objects.count { $0["event"] == "activity" } > before }
        try #require(arrived)
        return (objects.last { $0["event"] == "activity" } ?? [:]).compactMapValues { Int($0) }
    }

    /// Interrupts the process (SIGKILL: it inherited the test runner's blocked signals) and waits.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Closes the probe's input (it shuts the provider down) and returns its final report.
    func finish() async throws -> [String: Int] {
        try input.fileHandleForWriting.close()
        let ended = await waitUntil { self.objects.contains { $0["event"] == "end" } }
        process.waitUntilExit()
        try #require(ended, "the probe printed no end report: \(objects)")
        #expect(process.terminationStatus == 0)
        return (objects.last { $0["event"] == "end" } ?? [:]).compactMapValues { Int($0) }
    }
}
