import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import InMemoryLogging
import Logging
import Policy
import Testing
import TestSupport

/// Retries over the real transport and a real loopback server, with a manual clock (no test
/// sleeps through a backoff) and seeded jitter.
struct TransportRetryTests {
    let server: TestHTTPServer
    let clock = ManualClock()
    let log = InMemoryLogHandler()
    let transport: CurlTransport

    init() throws {
        server = try TestHTTPServer()
        var handler = log
        handler.logLevel = .debug
        let logger = Logger(label: "test") { _ in handler }
        transport = Self.transport(clock: clock, logger: logger)
    }

    static func transport(retry: RetryPolicy = .standard, clock: ManualClock, logger: Logger = .disabled) -> CurlTransport {
        var configuration = TransportConfiguration()
        configuration.retry = retry
        let random = SeededBits(seed: 42)
        // No assertion in deinit: a test that fails before its shutdown fails alone.
        return CurlTransport(configuration: configuration, logger: logger,
                             hooks: TransportHooks(assertsShutdownBeforeDeinit: false, clock: clock, random: { random.next() }))
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    func download(_ path: String) -> Task<[UInt8], any Error> {
        let transport = self.transport
        let url = url(path)
        return Task { try await transport.download(url) }
    }

    /// Lets each backoff end, as often as `times`: waits until the transport sleeps on the clock,
    /// then moves the clock past the longest backoff.
    func endBackoffs(_ times: Int) async {
        for _ in 0..<times {
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(30))
        }
    }

    func failure(of task: Task<[UInt8], any Error>) async -> FetchError? {
        do {
            _ = try await task.value
            return nil
        } catch {
            return error as? FetchError
        }
    }

    var retryEntries: [InMemoryLogHandler.Entry] { log.entries.filter { $0.message == "retrying transfer" } }

    @Test(.timeLimit(.minutes(5)))
    func a503IsRetriedThenGivenUp() async throws {
        server.route("/busy", .status(503))
        let task = download("/busy")
        await endBackoffs(2)
        let error = try #require(await failure(of: task))
        #expect(error.code == .httpStatus(503))
        #expect(error.attempts == 3)
        #expect(error.description == "\(url("/busy")): HTTP 503 (service unavailable) after 3 attempts")
        #expect(server.hits("/busy") == 3)
        #expect(transport.statistics == TransportStatistics(retries: 2, failedAfterRetries: 1))
        #expect(retryEntries.map(\.level) == [.notice, .notice])
        #expect(retryEntries.map { $0.metadata["attempt"] } == ["2 of 3", "3 of 3"])
        #expect(retryEntries.allSatisfy { $0.metadata["url"] == "\(url("/busy"))" && $0.metadata["cause"] == "HTTP 503 (service unavailable)" })
        #expect(clock.sleeperCount == 0)
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func a503ThenA200Succeeds() async throws {
        server.route("/flaky", .dynamic { hit in hit == 1 ? .status(503) : .ok(TestImages.png(seed: 5)) })
        let task = download("/flaky")
        await endBackoffs(1)
        #expect(try await task.value == TestImages.png(seed: 5))
        #expect(server.hits("/flaky") == 2)
        #expect(transport.statistics == TransportStatistics(retries: 1, failedAfterRetries: 0))
        await transport.shutdown()
    }

    /// `Retry-After` as seconds or as an HTTP-date (counted from the response's `Date`).
    @Test(.timeLimit(.minutes(5)), arguments: [
        (429, ["Retry-After: 7"], Duration.seconds(7)),
        (503, ["Retry-After: 2"], .seconds(2)),
        (429, ["Date: Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After: Sun, 06 Nov 1994 08:49:49 GMT"], .seconds(12)),
        (429, ["Retry-After: 0"], .zero),
    ])
    func retryAfterIsWaitedExactly(status: Int, headers: [String], delay: Duration) async throws {
        server.route("/slow-down", .dynamic { hit in hit == 1 ? .headers(status, headers) : .ok(TestImages.png()) })
        let task = download("/slow-down")
        if delay > .zero {
            await clock.waitForSleepers(1)
            clock.advance(by: delay - .nanoseconds(1))
            #expect(clock.sleeperCount == 1, "the retry waits the whole Retry-After")
            #expect(server.hits("/slow-down") == 1)
            // The network coming back does not cut short a wait the server asked for.
            transport.networkReturned()
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .nanoseconds(1))
        }
        #expect(try await task.value == TestImages.png())
        #expect(server.hits("/slow-down") == 2)
        #expect(retryEntries.first?.metadata["delay"] == "\(delay)")
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func aRetryAfterBeyondTheCapFailsAtOnceWithTheStatus() async throws {
        server.route("/later", .headers(429, ["Retry-After: 3600"]))
        let error = try #require(await failure(of: download("/later")))
        #expect(error.code == .httpStatus(429))
        #expect(error.attempts == 1)
        #expect(server.hits("/later") == 1)
        #expect(transport.statistics.retries == 0)
        await transport.shutdown()
    }

    /// Answers a retry cannot change: never retried.
    @Test(.timeLimit(.minutes(5)), arguments: [
        ("/404", TestHTTPServer.Response.status(404)),
        ("/403", .status(403)),
        ("/400", .status(400)),
        ("/410", .status(410)),
        ("/501", .status(501)),
        ("/html", .ok(Array("<html>sign in</html>".utf8), contentType: "text/html")),
        ("/empty", .ok([])),
    ])
    func answersThatARetryCannotChangeAreNeverRetried(path: String, response: TestHTTPServer.Response) async throws {
        server.route(path, response)
        let error = try #require(await failure(of: download(path)))
        #expect(error.attempts == 1)
        #expect(server.hits(path) == 1)
        #expect(clock.sleeperCount == 0)
        #expect(transport.statistics.retries == 0)
        #expect(retryEntries.isEmpty)
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingDuringTheBackoffEndsAtOnceAsCancelled() async throws {
        server.route("/busy", .status(503))
        let task = download("/busy")
        await clock.waitForSleepers(1)
        task.cancel()
        // The clock never moves: only the cancellation can end the wait.
        #expect(await failure(of: task) == FetchError(url: url("/busy"), code: .cancelled))
        #expect(clock.sleeperCount == 0)
        #expect(server.hits("/busy") == 1)
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func aShutdownEndsEveryBackoffAsCancelled() async throws {
        server.route("/busy", .status(503))
        server.route("/later", .headers(429, ["Retry-After: 50"]))
        let tasks = [download("/busy"), download("/later")]
        await clock.waitForSleepers(2)
        await transport.shutdown()
        // The clock never moves: only the shutdown can end the waits.
        for (task, path) in zip(tasks, ["/busy", "/later"]) {
            #expect(await failure(of: task) == FetchError(url: url(path), code: .cancelled))
            #expect(server.hits(path) == 1)
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func theNetworkReturningRetriesAtOnce() async throws {
        server.route("/flaky", .dynamic { hit in hit == 1 ? .status(503) : .ok(TestImages.png(seed: 9)) })
        let task = download("/flaky")
        await clock.waitForSleepers(1)
        transport.networkReturned()
        // The clock never moves: only the network's return can end the wait.
        #expect(try await task.value == TestImages.png(seed: 9))
        #expect(server.hits("/flaky") == 2)
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func aRefusedConnectionIsRetried() async throws {
        let closed = try TestHTTPServer()
        let refused = ImageURL(closed.url("/x"))!
        closed.stop()
        let transport = self.transport
        let task = Task { try await transport.download(refused) }
        await endBackoffs(2)
        let error = try #require(await failure(of: task))
        guard error.code.curlCode == 7 else {
            Issue.record("expected connection refused, got \(error)")
            return
        }
        #expect(error.attempts == 3)
        #expect(error.reason.hasSuffix("(curl 7) after 3 attempts"))
        #expect(transport.statistics.retries == 2)
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func withRetriesTurnedOffAFailureIsFinal() async throws {
        let transport = Self.transport(retry: .never, clock: clock)
        server.route("/busy", .status(503))
        await #expect(throws: FetchError(url: url("/busy"), code: .httpStatus(503))) { try await transport.download(url("/busy")) }
        #expect(server.hits("/busy") == 1)
        #expect(clock.sleeperCount == 0)
        await transport.shutdown()
        await self.transport.shutdown()
    }
}
