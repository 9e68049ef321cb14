import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// The libcurl transport against a real server on 127.0.0.1 that misbehaves on purpose.
@Suite(.serialized)
struct CurlTransportTests {
    static let transport: CurlTransport = {
        var configuration = TransportConfiguration()
        configuration.maximumBodySize = 64 << 10
        configuration.totalTimeout = .seconds(5)
        configuration.lowSpeedLimit = 1000
        configuration.lowSpeedTime = .seconds(1)
        return CurlTransport(configuration: configuration)
    }()

    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    func failure(_ path: String) async -> FetchError.Code? {
        do {
            _ = try await Self.transport.download(url(path))
            return nil
        } catch {
            return error.code
        }
    }

    @Test(arguments: TestImages.samples.map(\.name))
    func downloadsEveryImageFormat(_ name: String) async throws {
        let bytes = TestImages.samples.first { $0.name == name }!.bytes
        server.route("/\(name)", .ok(bytes))
        #expect(try await Self.transport.download(url("/\(name)")) == bytes)
        #expect(ImageFormat.sniff(bytes)?.rawValue == name)
    }

    @Test func chunkedAndCloseDelimitedBodiesAreComplete() async throws {
        let image = TestImages.png(size: 20_000)
        server.route("/chunked", .chunked(image))
        server.route("/close", .untilClose(image))
        #expect(try await Self.transport.download(url("/chunked")) == image)
        #expect(try await Self.transport.download(url("/close")) == image)
    }

    @Test func errorStatusesAreTyped() async {
        server.route("/500", .status(500, Array("oops".utf8)))
        #expect(await failure("/missing") == .httpStatus(404))
        #expect(await failure("/500") == .httpStatus(500))
    }

    @Test func htmlWithStatus200IsNotAnImage() async {
        server.route("/html", .ok(Array("<html><body>Sign in</body></html>".utf8), contentType: "text/html"))
        #expect(await failure("/html") == .notAnImage(contentType: "text/html", start: "\"<html><body>Sign…\""))
    }

    @Test func anEmptyBodyIsAnError() async {
        server.route("/empty", .ok([]))
        #expect(await failure("/empty") == .emptyBody)
    }

    @Test func aBodyCutShortIsAnError() async {
        server.route("/short", .cutShort(declared: 5000, TestImages.png(size: 1000)))
        #expect(await failure("/short") == .truncated(expected: 5000, received: 1000))
    }

    @Test func aConnectionResetIsAnError() async {
        server.route("/reset", .reset)
        guard case .transport(let code, let message)? = await failure("/reset") else {
            Issue.record("expected a transport error")
            return
        }
        #expect(code == 52 || code == 56, "\(code) \(message)")
    }

    @Test func bodiesPastTheLimitAreStoppedWithAndWithoutLength() async {
        let big = TestImages.png(size: 200_000)
        server.route("/big-length", .ok(big))
        server.route("/big-chunked", .chunked(big))
        server.route("/big-close", .untilClose(big))
        for path in ["/big-length", "/big-chunked", "/big-close"] {
            #expect(await failure(path) == .tooLarge(limit: 64 << 10), "\(path)")
        }
    }

    @Test func redirectsAreFollowedWithinLimits() async throws {
        let image = TestImages.png()
        server.route("/final", .ok(image))
        for hop in 1...3 { server.route("/chain\(hop)", .redirect(hop == 3 ? "/final" : "/chain\(hop + 1)")) }
        #expect(try await Self.transport.download(url("/chain1")) == image)
        server.route("/loop", .redirect("/loop"))
        #expect(await failure("/loop") == .redirectRefused("more than 5 redirects"))
        server.route("/to-file", .redirect("file:///etc/passwd"))
        guard case .redirectRefused? = await failure("/to-file") else {
            Issue.record("a redirect to file:// must be refused")
            return
        }
    }

    @Test func aSlowDripIsAbortedByTheLowSpeedLimit() async {
        server.route("/drip", .drip(TestImages.png(size: 4000), chunk: 10, interval: 0.2))
        guard case .transport(let code, _)? = await failure("/drip") else {
            Issue.record("expected the low-speed abort")
            return
        }
        #expect(code == 28)  // CURLE_OPERATION_TIMEDOUT
    }

    @Test func aSlowFirstByteRunsIntoTheTotalTimeout() async throws {
        var configuration = TransportConfiguration()
        configuration.totalTimeout = .milliseconds(400)
        let impatient = CurlTransport(configuration: configuration)
        defer { impatient.shutdown() }
        server.route("/first-byte", .delayed(0.6, .ok(TestImages.png())))
        do {
            _ = try await impatient.download(url("/first-byte"))
            Issue.record("a response slower than the total timeout was accepted")
        } catch {
            guard case .transport(28, _) = error.code else { Issue.record("\(error)"); return }
        }
        // The same slow first byte within the default timeout is fine.
        #expect(try await Self.transport.download(url("/first-byte")) == TestImages.png())
    }

    @Test func cancellingTheTaskStopsTheTransferAtOnce() async throws {
        server.route("/slow", .delayed(3, .ok(TestImages.png())))
        let started = ContinuousClock.now
        let task = Task { try await Self.transport.download(url("/slow")) }
        #expect(await waitUntil { server.hits("/slow") == 1 })
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled download returned")
        } catch let error as FetchError {
            #expect(error.code == .cancelled)
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func connectionsAreReused() async throws {
        let image = TestImages.png()
        server.route("/reuse", .ok(image))
        for _ in 0..<20 { _ = try await Self.transport.download(url("/reuse")) }
        #expect(server.hits("/reuse") == 20)
        #expect(server.connections <= 2)
    }

    @Test func manyConcurrentDownloadsRespectTheConnectionLimit() async throws {
        server.route("/many", .delayed(0.02, .ok(TestImages.png())))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 { group.addTask { try await Self.transport.download(url("/many")).count } }
            for try await count in group { #expect(count == 1024) }
        }
        #expect(server.hits("/many") == 40)
        #expect(server.connections <= TransportConfiguration().maximumConnectionsPerHost)
    }

    @Test func aRefusedConnectionIsATransportError() async throws {
        let closed = try TestHTTPServer()
        let address = closed.url("/x")
        closed.stop()
        do {
            _ = try await Self.transport.download(ImageURL(address)!)
            Issue.record("downloaded from a closed port")
        } catch {
            guard case .transport(7, _) = error.code else { Issue.record("\(error)"); return }
            #expect(error.description.hasPrefix(address + ": "))
        }
    }
}
