import Fetch
@testable import Transport
import Foundation
import Synchronization
import Policy
import Testing
import TestSupport

/// Issue 17, the first screen of a list on a fresh host, over the real transport and a loopback
/// server: every request leaves at once when the host allows enough connections (no request waits
/// for another's answer to learn whether a connection multiplexes: over plain HTTP nothing can),
/// and a burst of requests queued out of order starts in priority order.
struct TransportFirstScreenTests {
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// Ten requests to a host the transport has never reached, at once, ten connections allowed:
    /// the server holds each until all ten are in it together (before the change, libcurl's
    /// `CURLOPT_PIPEWAIT` sent the first alone and held the others until its answer, so the server
    /// never saw them together and the first gave up after its patience). Each answer then comes
    /// after a delay of its own (seeded), and a second burst reuses the ten connections.
    @Test(.timeLimit(.minutes(5)))
    func tenRequestsToAFreshHostAreAllInFlightAtOnce() async throws {
        let random = SeededBits(seed: 17, label: "TransportFirstScreenTests.tenRequestsToAFreshHostAreAllInFlightAtOnce")
        let gates = [RequestGate(parties: 10, patience: 30), RequestGate(parties: 10, patience: 30)]
        for round in 0..<2 {
            for row in 0..<10 {
                let delay = Double(random.int(in: 0...30)) / 1000, image = TestImages.png(seed: 100 * round + row)
                server.route("/\(round)/\(row).png", .request { [gate = gates[round]] _ in
                    gate.arrive()
                    return .delayed(delay, .ok(image))
                })
            }
        }
        var configuration = TransportConfiguration.patient
        configuration.maximumConnections = 10
        configuration.maximumConnectionsPerHost = 10
        let transport = CurlTransport(configuration: configuration)
        for round in 0..<2 {
            let rows = (0..<10).map { row in
                Task { try await transport.download(url("/\(round)/\(row).png"), priority: RequestPriority(LoadPriority(.visible, order: row))) }
            }
            let images = try await withDeadline("round \(round)'s ten downloads") {
                var images: [[UInt8]] = []
                for row in rows { images.append(try await row.value) }
                return images
            }
            #expect(images == (0..<10).map { TestImages.png(seed: 100 * round + $0) })
            #expect(gates[round].met, "round \(round): \(gates[round].arrivalsWhenOneGaveUp ?? 0) of 10 requests had reached the server when the first gave up waiting")
        }
        #expect(server.connections == 10, "the second burst reuses the first one's connections")
        await transport.shutdown()
    }

    /// One connection, requests queued one after another in a seeded order (a task for each, as
    /// a list's rows queue theirs): the first of them does not take the connection because it
    /// came first; they start most urgent first. The gathering's clock is stopped while they are
    /// queued (a starved machine may take longer than any window between two of them), then moved
    /// past the window. Without gathering (as before, or `gatheringWindow = .zero`) the first
    /// queued is served first and the test fails.
    @Test(.timeLimit(.minutes(5)))
    func requestsQueuedOutOfOrderStartInPriorityOrder() async throws {
        var generator = SeededGenerator(seed: 17, label: "TransportFirstScreenTests.requestsQueuedOutOfOrderStartInPriorityOrder")
        let priorities = [LoadPriority(.visible, order: 1), LoadPriority(.visible, order: 4), LoadPriority(.near, order: 0),
                          LoadPriority(.near, order: 2), LoadPriority(.prefetch, order: 0), LoadPriority(.prefetch, order: 3)]
        var order = Array(priorities.indices)
        // Never already sorted: the most urgent does not come first.
        repeat { order.shuffle(using: &generator) } while order.first == 0
        let served = LockedList<Int>()
        for index in priorities.indices {
            server.route("/\(index).png", .request { _ in
                served.append(index)
                return .ok(TestImages.png(seed: index))
            })
        }
        var configuration = TransportConfiguration.patient
        configuration.maximumConnections = 1
        let clock = StoppedClock()
        let transport = CurlTransport(configuration: configuration, logger: .disabled,
                                      hooks: TransportHooks(gatheringClock: { clock.nanoseconds }))
        var tasks: [Task<[UInt8], any Error>] = []
        for (queued, index) in order.enumerated() {
            tasks.append(Task { try await transport.download(url("/\(index).png"), priority: RequestPriority(priorities[index])) })
            #expect(await waitUntil { transport.load.running + transport.load.waiting + served.values.count >= queued + 1 })
        }
        clock.advance(by: 1_000_000_000)
        let all = tasks
        try await withDeadline("the six downloads") {
            for task in all { _ = try await task.value }
        }
        #expect(served.values == Array(priorities.indices), "queued in the order \(order)")
        await transport.shutdown()
    }
}

/// A clock that stands still until a test moves it: monotonic nanoseconds.
private final class StoppedClock: Sendable {
    private let value = Atomic<UInt64>(1_000_000_000)

    var nanoseconds: UInt64 { value.load(ordering: .acquiring) }

    func advance(by nanoseconds: UInt64) { value.add(nanoseconds, ordering: .releasing) }
}
