import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Policy
import Testing
import TestSupport

/// Priorities over the real transport and a real loopback server, with one connection: what waits
/// starts most urgent first, and a priority raised while waiting overtakes.
struct TransportPriorityTests {
    let server: TestHTTPServer
    /// The paths in the order the server received them.
    let served = LockedList<String>()

    init() throws {
        server = try TestHTTPServer()
        server.route("/busy", .hang)
        for path in ["/prefetch", "/near", "/visible", "/first", "/second", "/third"] {
            server.route(path, .dynamic { [served] _ in
                served.append(path)
                return .ok(TestImages.png())
            })
        }
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// A transport with one connection, taken by a request that never ends until cancelled; the
    /// poll never ends by itself, so only wake-ups move it on.
    func oneBusyConnection() async -> (CurlTransport, Task<[UInt8], any Error>) {
        var configuration = TransportConfiguration.patient   // the busy answer never times out
        configuration.maximumConnections = 1
        let transport = CurlTransport(configuration: configuration, logger: .disabled,
                                      hooks: TransportHooks(pollTimeoutMilliseconds: 3_600_000, assertsShutdownBeforeDeinit: false))
        let busy = Task { try await transport.download(url("/busy")) }
        #expect(await waitUntil { server.hits("/busy") == 1 })
        return (transport, busy)
    }

    @Test(.timeLimit(.minutes(5)))
    func theMoreUrgentWaitingRequestIsServedFirst() async throws {
        let (transport, busy) = await oneBusyConnection()
        // Queued least urgent first, so that first in, first out would give the opposite order.
        let prefetch = Task { try await transport.download(url("/prefetch"), priority: RequestPriority(LoadPriority(.prefetch))) }
        #expect(await waitUntil { transport.load.waiting == 1 })
        let near = Task { try await transport.download(url("/near"), priority: RequestPriority(LoadPriority(.near, order: 1))) }
        #expect(await waitUntil { transport.load.waiting == 2 })
        let visible = Task { try await transport.download(url("/visible")) }
        #expect(await waitUntil { transport.load.waiting == 3 })
        busy.cancel()
        for task in [prefetch, near, visible] { _ = try await task.value }
        #expect(served.values == ["/visible", "/near", "/prefetch"])
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func aPriorityRaisedWhileWaitingOvertakes() async throws {
        let (transport, busy) = await oneBusyConnection()
        let priorities = (0..<3).map { RequestPriority(LoadPriority(.prefetch, order: $0)) }
        var tasks: [Task<[UInt8], any Error>] = []
        for (index, path) in ["/first", "/second", "/third"].enumerated() {
            tasks.append(Task { try await transport.download(url(path), priority: priorities[index]) })
            #expect(await waitUntil { transport.load.waiting == index + 1 })
        }
        // The last row scrolls onto the screen while its request waits.
        priorities[2].value = LoadPriority(.visible, order: 0)
        busy.cancel()
        for task in tasks { _ = try await task.value }
        #expect(served.values == ["/third", "/first", "/second"])
        await transport.shutdown()
    }
}
