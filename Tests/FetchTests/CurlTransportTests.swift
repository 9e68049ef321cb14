import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import InMemoryLogging
import Logging
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
        // One attempt: these tests are about one transfer; retries have theirs (TransportRetryTests).
        configuration.retry = .never
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
        let failed = await failure("/reset")
        guard let code = failed?.curlCode, let message = failed?.detail else {
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
        guard await failure("/to-file")?.kind == .redirectRefused else {
            Issue.record("a redirect to file:// must be refused")
            return
        }
    }

    @Test func aSlowDripIsAbortedByTheLowSpeedLimit() async {
        server.route("/drip", .drip(TestImages.png(size: 4000), chunk: 10, interval: 0.2))
        guard let code = await failure("/drip")?.curlCode else {
            Issue.record("expected the low-speed abort")
            return
        }
        #expect(code == 28)  // CURLE_OPERATION_TIMEDOUT
    }

    @Test func aSlowFirstByteRunsIntoTheTotalTimeout() async throws {
        var configuration = TransportConfiguration()
        configuration.totalTimeout = .milliseconds(400)
        server.route("/first-byte", .delayed(0.6, .ok(TestImages.png())))
        try await CurlTransport.withTransport(configuration: configuration) { impatient in
            do {
                _ = try await impatient.download(url("/first-byte"))
                Issue.record("a response slower than the total timeout was accepted")
            } catch let error as FetchError {
                guard error.code.curlCode == 28 else { Issue.record("\(error)"); return }
            }
        }
        // The same slow first byte within the default timeout is fine.
        #expect(try await Self.transport.download(url("/first-byte")) == TestImages.png())
    }

    /// The thread's wait ends by curl's own timer (`curl_multi_poll` waits at most until it; kept
    /// for any other way of waiting, such as the epoll driver tried in docs/transport.md): with a
    /// wait that never ends by itself and a server that never answers, only that timer can end the
    /// transfer with curl's timeout (it hangs into the time limit without it: checked with the
    /// epoll driver's timer disabled).
    @Test(.timeLimit(.minutes(1)))
    func curlsTimerEndsAHungTransferThoughTheWaitNeverEndsByItself() async throws {
        var configuration = TransportConfiguration()
        configuration.totalTimeout = .milliseconds(300)
        configuration.retry = .never
        let transport = CurlTransport(configuration: configuration, logger: .disabled,
                                      hooks: TransportHooks(pollTimeoutMilliseconds: 3_600_000))
        server.route("/hang-timer", .hang)
        let result: Result<[UInt8], FetchError>
        do {
            result = .success(try await transport.download(url("/hang-timer")))
        } catch {
            result = .failure(error)
        }
        await transport.shutdown()
        guard case .failure(let error) = result, error.code.curlCode == 28 else {
            Issue.record("expected curl's timeout (28), got \(result)")
            return
        }
    }

    /// A transport whose poll never ends by itself (an hour): only a wake-up moves it on, so a
    /// test that completes proves the wake-up (and hangs into its time limit without it).
    static func wakeUpOnly(maximumConnections: Int = 8, logger: Logger = .disabled) -> CurlTransport {
        var configuration = TransportConfiguration()
        configuration.maximumConnections = maximumConnections
        configuration.retry = .never
        return CurlTransport(configuration: configuration, logger: logger, hooks: TransportHooks(pollTimeoutMilliseconds: 3_600_000))
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingTheTaskStopsTheTransferAtOnce() async throws {
        let transport = Self.wakeUpOnly()
        server.route("/hang", .hang)
        let task = Task { try await transport.download(url("/hang")) }
        #expect(await waitUntil { server.hits("/hang") == 1 && transport.load.running == 1 })
        task.cancel()
        // The server never answers: only the cancellation can end the download.
        await #expect(throws: FetchError(url: url("/hang"), code: .cancelled)) { try await task.value }
        #expect(transport.load == .init(running: 0, waiting: 0))
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func aCancellationFreesTheConnectionForTheNextTransferAtOnce() async throws {
        // One connection: a transfer that never ends, and one waiting behind it.
        let transport = Self.wakeUpOnly(maximumConnections: 1)
        server.route("/hang", .hang)
        server.route("/next", .ok(TestImages.png(seed: 7)))
        let stuck = Task { try await transport.download(url("/hang")) }
        #expect(await waitUntil { server.hits("/hang") == 1 })
        async let next = transport.download(url("/next"))
        #expect(await waitUntil { transport.load == .init(running: 1, waiting: 1) })
        stuck.cancel()
        await #expect(throws: FetchError(url: url("/hang"), code: .cancelled)) { try await stuck.value }
        // Without the wake-up and the freed slot, this waits for the hour-long poll.
        #expect(try await next == TestImages.png(seed: 7))
        await transport.shutdown()
    }

    @Test func aCompleteBodyIsDeliveredThoughItsWaiterLeftAsItArrived() async throws {
        let waiter = LockedList<Task<[UInt8], any Error>>()
        let transport = CurlTransport(configuration: .standard, logger: .disabled,
                                      hooks: TransportHooks(transferCompleted: { _ in waiter.values.first?.cancel() }))
        server.route("/arrived", .ok(TestImages.png(seed: 3)))
        let (go, start) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in go { break }
            return try await transport.download(url("/arrived"))
        }
        waiter.append(task)
        start.yield()
        // The task is cancelled between curl's "complete" and the verdict: the image still counts.
        #expect(try await task.value == TestImages.png(seed: 3))
        #expect(task.isCancelled)
        await transport.shutdown()
    }

    @Test func failedTransfersAndCancellationsAreLogged() async throws {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        let logger = Logger(label: "test") { _ in handler }
        let transport = Self.wakeUpOnly(logger: logger)
        server.route("/gone", .status(410))
        server.route("/hang", .hang)
        _ = try? await transport.download(url("/gone"))
        let closed = try TestHTTPServer()
        let refused = ImageURL(closed.url("/x"))!
        closed.stop()
        _ = try? await transport.download(refused)
        let task = Task { try await transport.download(url("/hang")) }
        #expect(await waitUntil { server.hits("/hang") == 1 })
        task.cancel()
        _ = try? await task.value
        await transport.shutdown()

        let failures = handler.entries.filter { $0.message == "transfer failed" }
        #expect(failures.count == 2)
        #expect(failures.allSatisfy { $0.level == .info })
        #expect(failures.first?.metadata["url"] == "\(url("/gone"))")
        #expect(failures.first?.metadata["http.status"] == "410")
        #expect(failures.first?.metadata["error"] == "HTTP 410 (gone)")
        #expect(failures.last?.metadata["url"] == "\(refused)")
        #expect(failures.last?.metadata["curl.code"] == "7")
        #expect(failures.last?.metadata["http.status"] == nil)
        let cancellations = handler.entries.filter { $0.message == "transfer cancelled" }
        #expect(cancellations.count == 1)
        #expect(cancellations.first?.level == .debug)
        #expect(cancellations.first?.metadata["url"] == "\(url("/hang"))")
    }

    @Test func connectionsAreReused() async throws {
        let image = TestImages.png()
        server.route("/reuse", .ok(image))
        for _ in 0..<20 { _ = try await Self.transport.download(url("/reuse")) }
        #expect(server.hits("/reuse") == 20)
        #expect(server.connections <= 2)
    }

    /// Easy handles are reused without `curl_easy_reset`: what one transfer set must not reach the
    /// next one on the same handle (one connection slot, so one handle, serves all three).
    @Test func aReusedHandleCarriesNothingOfTheTransferBefore() async throws {
        server.route("/first", .ok(TestImages.png()))
        server.route("/second", .ok(TestImages.png()))
        server.route("/gone", .status(410, Array("gone".utf8)))
        var configuration = TransportConfiguration()
        configuration.maximumConnections = 1
        configuration.maximumConnectionsPerHost = 1
        configuration.retry = .never
        try await CurlTransport.withTransport(configuration: configuration) { transport in
            _ = try await transport.response(for: url("/first"), headers: [("X-Trace", "first")], priority: RequestPriority(),
                                             checkpoints: nil)
            do {
                _ = try await transport.download(url("/gone"))
                Issue.record("a 410 was delivered as an image")
            } catch {
                #expect((error as? FetchError)?.code == .httpStatus(410))
            }
            let bytes = try await transport.download(url("/second"))
            #expect(bytes == TestImages.png())
        }
        #expect(server.requests("/first").first?.header("X-Trace") == "first")
        #expect(server.requests("/gone").first?.header("X-Trace") == nil)
        #expect(server.requests("/second").first?.header("X-Trace") == nil)
        #expect(server.connections == 1)
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
            guard error.code.curlCode == 7 else { Issue.record("\(error)"); return }
            #expect(error.description.hasPrefix(address + ": "))
        }
    }
}
