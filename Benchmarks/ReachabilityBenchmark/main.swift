// `scripts/bench-reachability.sh`: what reading the network state costs, and how late a change
// reaches a consumer.
//
//   reachability-benchmark reads             ns per currentState read: the event-driven provider
//                                            (a stored value) against a detection per read (what
//                                            the polling provider did)
//   reachability-benchmark latency LINK N    inside a network namespace whose default route goes
//                                            through LINK: N times, `ip link set LINK down` and the
//                                            time until the consumer sees offline; then up again
import Foundation
import LinuxNetwork
import Policy

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

func milliseconds(_ duration: Duration) -> Double { nanoseconds(duration) / 1e6 }

@inline(never)
func consume(_ state: NetworkState) -> Int { state.isExpensive ? 1 : state.kind == .offline ? 2 : 0 }

func reads() async throws {
    let provider = try LinuxReachability(configuration: .init(watchesSystemBus: false))
    let clock = ContinuousClock()
    var sink = 0
    let count = 10_000_000
    for _ in 0..<1000 { sink &+= consume(provider.currentState) }
    let stored = clock.measure {
        for _ in 0..<count { sink &+= consume(provider.currentState) }
    }
    let detector = NetworkDetector()
    let detections = 2000
    let detected = clock.measure {
        for _ in 0..<detections { sink &+= consume(detector.detect().state) }
    }
    await provider.shutdown()
    print(String(format: "currentState, stored (event-driven): %.1f ns per read (%d reads)", nanoseconds(stored) / Double(count), count))
    print(String(format: "detection per read (the polling provider's currentState): %.0f ns per read (%d reads)",
                 nanoseconds(detected) / Double(detections), detections))
    print(String(format: "ratio: %.0f×", (nanoseconds(detected) / Double(detections)) / (nanoseconds(stored) / Double(count))))
    if sink == 42 { print("") }
}

struct CommandFailed: Error { var arguments: [String] }

/// Runs /usr/sbin/ip with posix_spawn (Foundation's Process wants a socket pair that a fresh
/// namespace may not give).
func ip(_ arguments: String...) throws {
    let argv = (["ip"] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, "/usr/sbin/ip", nil, nil, argv, environ) == 0 else { throw CommandFailed(arguments: arguments) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    guard status == 0 else { throw CommandFailed(arguments: arguments) }
}

func latency(link: String, gateway: String, rounds: Int) async throws {
    let provider = try LinuxReachability(configuration: .init(watchesSystemBus: false))
    var iterator = provider.stateChanges().makeAsyncIterator()
    guard let first = await iterator.next(), first.kind != .offline else {
        print("the namespace has no usable default route through \(link)")
        return
    }
    var samples: [Double] = []
    var spawnCosts: [Double] = []
    for _ in 0..<rounds {
        let start = ContinuousClock.now
        try ip("link", "set", link, "down")
        let ipDone = ContinuousClock.now
        while let state = await iterator.next(), state.kind != .offline {}
        let seen = ContinuousClock.now
        samples.append(milliseconds(seen - start))
        spawnCosts.append(milliseconds(ipDone - start))
        try ip("link", "set", link, "up")
        try ip("route", "replace", "default", "via", gateway, "dev", link)
        while let state = await iterator.next(), state.kind == .offline {}
    }
    await provider.shutdown()
    samples.sort()
    spawnCosts.sort()
    print(String(format: "event latency, ip link set %@ down → consumer sees offline, %d rounds: median %.1f ms, worst %.1f ms, best %.1f ms",
                 link, rounds, samples[samples.count / 2], samples.last ?? 0, samples.first ?? 0))
    print(String(format: "(of which running ip itself: median %.1f ms; the debounce's quiet period: %.0f ms)",
                 spawnCosts[spawnCosts.count / 2], milliseconds(LinuxReachability.Configuration.standard.quietPeriod)))
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "reads":
    try await reads()
case "latency" where arguments.count >= 4:
    try await latency(link: arguments[2], gateway: arguments[3], rounds: arguments.count > 4 ? Int(arguments[4]) ?? 50 : 50)
default:
    FileHandle.standardError.write(Data("usage: reachability-benchmark reads | latency LINK GATEWAY [N]\n".utf8))
    exit(64)
}
