import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// The pipeline over the real transport and a real loopback server.
struct ImagePipelineTests {
    static let transport = CurlTransport(configuration: .patient)
    let server: TestHTTPServer
    let folder = TemporaryFolder()
    let pipeline: ImagePipeline

    init() throws {
        server = try TestHTTPServer()
        pipeline = ImagePipeline(downloader: Self.transport, memory: MemoryCache(), disk: try DiskCache(folder: folder.path))
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// A server delay no test waits out: a transfer that ends before it was stopped.
    static let never = 600.0

    @Test func readThroughNetworkThenMemoryThenDisk() async throws {
        let image = TestImages.png(size: 3000)
        server.route("/a", .ok(image))
        #expect(try await pipeline.image(for: url("/a")).source == .network)
        #expect(try await pipeline.image(for: url("/a")).source == .memory)
        await pipeline.flush()
        pipeline.memory.purge()
        let fromDisk = try await pipeline.image(for: url("/a"))
        #expect(fromDisk.source == .disk && fromDisk.bytes == image)
        #expect(pipeline.memory.containsImage(at: url("/a")))   // a disk hit is copied into memory
        #expect(server.hits("/a") == 1)
    }

    @Test func tenWaitersShareOneTransfer() async throws {
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/shared", gate.hold(.ok(TestImages.png())))
        let results = try await withThrowingTaskGroup(of: FetchedImage.self) { group in
            for _ in 0..<10 { group.addTask { try await pipeline.image(for: url("/shared")) } }
            // Every waiter has joined the one transfer before the server answers.
            #expect(await waitUntil { pipeline.statistics.waiters == 10 && server.hits("/shared") == 1 })
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 10)
        #expect(results.allSatisfy { $0.bytes == TestImages.png() })
        #expect(server.hits("/shared") == 1)
    }

    @Test func cancellingOneWaiterLeavesTheOthersTheirImage() async throws {
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/one", gate.hold(.ok(TestImages.png())))
        let cancelled = Task { try await pipeline.image(for: url("/one")) }
        let kept = Task { try await pipeline.image(for: url("/one")) }
        #expect(await waitUntil { server.hits("/one") == 1 && pipeline.statistics.waiters == 2 })
        cancelled.cancel()
        await #expect(throws: FetchError(url: url("/one"), code: .cancelled)) { try await cancelled.value }
        gate.open()
        #expect(try await kept.value.bytes == TestImages.png())
        #expect(server.hits("/one") == 1)
    }

    @Test func cancellingEveryWaiterStopsTheTransfer() async throws {
        // A transport of its own, so that its count of running transfers is this test's alone.
        let transport = CurlTransport(configuration: .patient)
        let pipeline = ImagePipeline(downloader: transport, disk: nil)
        // The server would answer only long after any test has ended: if the transfer leaves the
        // transport, the cancellation stopped it (no race with a clock).
        server.route("/all", .delayed(Self.never, .ok(TestImages.png())))
        let tasks = (0..<3).map { _ in Task { try await pipeline.image(for: url("/all")) } }
        #expect(await waitUntil { server.hits("/all") == 1 && transport.load.running == 1 })
        #expect(pipeline.statistics.inFlight == 1)
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: FetchError(url: url("/all"), code: .cancelled)) { try await task.value } }
        // The transfer leaves the transport, then the pipeline forgets the load.
        #expect(await waitUntil { transport.load.running == 0 })
        #expect(await waitUntil { pipeline.statistics.isIdle })
        #expect(!pipeline.containsImage(at: url("/all")))
        #expect(pipeline.statistics.downloads == 1)
        await transport.shutdown()
    }

    @Test func aFailureIsNotCachedAndTheNextRequestRetries() async throws {
        // A 404 (a 503 would be retried by the transport, and succeed within this one request).
        server.route("/flaky", .dynamic { hit in hit == 1 ? .status(404) : .ok(TestImages.png()) })
        await #expect(throws: FetchError(url: url("/flaky"), code: .httpStatus(404))) { try await pipeline.image(for: url("/flaky")) }
        #expect(!pipeline.containsImage(at: url("/flaky")))
        #expect(pipeline.statistics.inFlight == 0)
        #expect(try await pipeline.image(for: url("/flaky")).source == .network)
        #expect(server.hits("/flaky") == 2)
    }

    @Test(arguments: ["/404", "/html", "/empty", "/short", "/reset"])
    func noCacheEntryAfterAnyFailure(_ path: String) async throws {
        server.route("/html", .ok(Array("<html></html>".utf8), contentType: "text/html"))
        server.route("/empty", .ok([]))
        server.route("/short", .cutShort(declared: 900, TestImages.png(size: 100)))
        server.route("/reset", .reset)
        await #expect(throws: FetchError.self) { try await pipeline.image(for: url(path)) }
        #expect(!pipeline.memory.containsImage(at: url(path)))
        #expect(pipeline.disk?.containsImage(at: url(path)) == false)
        #expect(pipeline.disk?.statistics.count == 0)
    }

    @Test func aCorruptedDiskEntryIsRefetched() async throws {
        let image = TestImages.png(size: 2000)
        server.route("/c", .ok(image))
        _ = try await pipeline.image(for: url("/c"))
        await pipeline.flush()
        pipeline.memory.purge()
        let file = try #require(try FileManager.default.subpathsOfDirectory(atPath: folder.path).first { $0.count == 35 })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path + "/" + file)))
        bytes[bytes.count - 1] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/" + file))
        let again = try await pipeline.image(for: url("/c"))
        #expect(again.source == .network && again.bytes == image)
        #expect(server.hits("/c") == 2)
    }

    @Test func offlineNeverTouchesTheServer() async throws {
        server.route("/off", .ok(TestImages.png()))
        await #expect(throws: FetchError(url: url("/off"), code: .offline)) {
            try await pipeline.image(for: url("/off"), networkAllowed: false)
        }
        #expect(server.totalHits == 0)
    }

    @Test func suspendedDownloadsWaitWhileCacheHitsAreServed() async throws {
        let transport = CurlTransport(configuration: .patient)
        let pipeline = ImagePipeline(downloader: transport, disk: nil)
        server.route("/cached", .ok(TestImages.png(seed: 1)))
        server.route("/held", .ok(TestImages.png(seed: 2)))
        server.route("/dropped", .ok(TestImages.png(seed: 3)))
        _ = try await pipeline.image(for: url("/cached"))
        pipeline.suspendDownloads()
        let held = Task { try await pipeline.image(for: url("/held")) }
        let dropped = Task { try await pipeline.image(for: url("/dropped")) }
        #expect(await waitUntil { transport.load.waiting == 2 })
        // While suspended: cache hits come at once, nothing new starts, a held load can be cancelled.
        #expect(try await pipeline.image(for: url("/cached")).source == .memory)
        #expect(transport.load.running == 0)
        dropped.cancel()
        await #expect(throws: FetchError(url: url("/dropped"), code: .cancelled)) { try await dropped.value }
        #expect(server.hits("/held") == 0 && server.hits("/dropped") == 0)
        pipeline.resumeDownloads()
        #expect(try await held.value.bytes == TestImages.png(seed: 2))
        #expect(server.hits("/held") == 1)
        #expect(server.hits("/dropped") == 0)
        await transport.shutdown()
    }

    @Test func purgeCancelsPrefetchesNobodyWaitsFor() async throws {
        let transport = CurlTransport(configuration: .patient)
        let pipeline = ImagePipeline(downloader: transport, disk: try DiskCache(folder: folder.path))
        server.route("/pre", .delayed(Self.never, .ok(TestImages.png())))
        pipeline.prefetch(url("/pre"))
        #expect(await waitUntil { server.hits("/pre") == 1 })
        #expect(pipeline.statistics.inFlight == 1)
        pipeline.purge()
        #expect(pipeline.statistics.inFlight == 0)
        // The transfer is stopped (the server never answers in time), and nothing is cached.
        #expect(await waitUntil { transport.load.running == 0 })
        await pipeline.flush()
        #expect(!pipeline.containsImage(at: url("/pre")))
        await transport.shutdown()
    }
}
