// `reachability-probe`: runs `LinuxReachability` in this process (inside a network namespace when
// started with `ip netns exec`) and reports what it sees, one JSON object per line, for the tests
// and scripts/bench-reachability.sh.
//
//   reachability-probe watch [quiet-ms [maximum-ms]]
//                                         each published state; on stdin `activity` the counters;
//                                         at stdin's end, shutdown and a leak report
//   reachability-probe lifecycle N        N providers started and ended every way; a leak report
import Foundation
import LinuxNetwork
import Policy

func emit(_ members: [(String, String)]) {
    let text = "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    FileHandle.standardOutput.write(Data(text.utf8))
}

func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "'") + "\"" }

func activityMembers(_ activity: LinuxReachability.Activity) -> [(String, String)] {
    [("datagrams", "\(activity.datagrams)"), ("messages", "\(activity.messages)"), ("overruns", "\(activity.overruns)"),
     ("detections", "\(activity.detections)"), ("published", "\(activity.published)")]
}

/// Threads of this process named like the provider's threads (netlink loop, system bus watcher).
func loopThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return ["imgpolicy-net", "imgpolicy-dbus"].contains(name.trimmingCharacters(in: .whitespacesAndNewlines))
    }.count
}

/// Open descriptors of this process, by what they are (`socket`, `anon_inode:[eventfd]`, …).
func descriptors() -> [String: Int] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var kinds: [String: Int] = [:]
    for name in names {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else { continue }
        let kind = target.hasPrefix("socket:") ? "socket" : target.hasPrefix("anon_inode:") ? target : "other"
        kinds[kind, default: 0] += 1
    }
    return kinds
}

func leakMembers() -> [(String, String)] {
    let open = descriptors()
    return [("loopThreads", "\(loopThreads())"), ("sockets", "\(open["socket"] ?? 0)"),
            ("eventfds", "\(open["anon_inode:[eventfd]"] ?? 0)")]
}

/// `syncShutdown()` from synchronous code, as a program without async would call it.
func shutDownSynchronously(_ provider: LinuxReachability) {
    provider.syncShutdown()
}

/// Lines of standard input, read on a thread of their own.
func standardInputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
    }
}

/// Prints each state until standard input ends, then shuts the provider down (it is released on
/// return, so the leak report after it counts what it left behind).
func watch(quiet: Int, maximum: Int, input: AsyncStream<String>) async throws -> LinuxReachability.Activity {
    let provider = try LinuxReachability(configuration: .init(quietPeriod: .milliseconds(quiet), maximumDelay: .milliseconds(maximum)))
    let consumer = Task {
        for await state in provider.stateChanges() {
            let detection = provider.detection
            emit([("event", quoted("state")), ("state", quoted(state.description)),
                  ("interface", quoted(detection.interface?.name ?? ""))] + activityMembers(provider.activity))
        }
    }
    for await line in input where line == "activity" {
        await provider.servicesAsked()
        let facts = provider.serviceFacts
        emit([("event", quoted("activity"))] + activityMembers(provider.activity)
             + [("metered", quoted(facts.metered.description)), ("captive", quoted(facts.captive.description)),
                ("roaming", quoted(facts.roaming.description))])
    }
    await provider.shutdown()
    await consumer.value
    return provider.activity
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "watch":
    let quiet = arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50
    let maximum = arguments.count > 3 ? Int(arguments[3]) ?? 500 : 500
    // The runtime opens its own eventfds with the first task and thread: let it, then count.
    let input = standardInputLines()
    await Task.detached {}.value
    let before = leakMembers()
    let activity = try await watch(quiet: quiet, maximum: maximum, input: input)
    emit([("event", quoted("end"))] + activityMembers(activity) + before.map { ("\($0.0)Before", $0.1) } + leakMembers())

case "lifecycle":
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10
    // Warm up what the runtime opens once (the cooperative pool, Foundation's descriptors).
    let warm = try LinuxReachability()
    for await _ in warm.stateChanges() { break }
    await warm.shutdown()
    let before = leakMembers()
    for round in 0..<rounds {
        let provider = try LinuxReachability()
        // A consumer that stops listening after the first state, one still listening at the end.
        for await _ in provider.stateChanges() { break }
        let listening = Task { for await _ in provider.stateChanges() {} }
        switch round % 3 {
        case 0: await provider.shutdown()
        case 1: shutDownSynchronously(provider)
        default: break  // dropped without a shutdown
        }
        if round % 3 != 2 { await listening.value } else { listening.cancel(); await listening.value }
    }
    // Dropped providers end their threads and close their descriptors on their own: wait for
    // that state (a leak never reaches it), a bounded time.
    let deadline = ContinuousClock.now + .seconds(10)
    func settled() -> Bool {
        let now = Dictionary(leakMembers(), uniquingKeysWith: { first, _ in first })
        let then = Dictionary(before, uniquingKeysWith: { first, _ in first })
        return now["loopThreads"] == "0" && now["sockets"] == then["sockets"] && now["eventfds"] == then["eventfds"]
    }
    while !settled(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    emit([("event", quoted("lifecycle"))] + before.map { ("\($0.0)Before", $0.1) } + leakMembers())

default:
    FileHandle.standardError.write(Data("usage: reachability-probe watch [quiet-ms [maximum-ms]] | lifecycle N\n".utf8))
    exit(64)
}
