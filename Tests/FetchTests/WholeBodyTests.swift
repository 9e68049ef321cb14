import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Support
import Policy
import Testing
import TestSupport

/// Nothing wrong is served: over the real transport and a loopback server that lies, a body is
/// never spliced from two versions, never cut short, never framed by two lengths, and a redirect
/// never carries credentials. Each answer is compared with the server's own bytes.
struct WholeBodyTests {
    let server: TestHTTPServer
    let folder = TemporaryFolder()
    let disk: DiskCache
    let transport: CurlTransport
    let pipeline: ImagePipeline
    static let imageA = TestImages.png(size: 600_000, seed: 1)
    static let imageB = TestImages.png(size: 600_000, seed: 2)

    init() throws {
        server = try TestHTTPServer()
        disk = try DiskCache(folder: folder.path)
        var configuration = TransportConfiguration.patient
        configuration.retry = RetryPolicy(attempts: 3, baseDelay: .zero, maximumDelay: .zero)
        transport = CurlTransport(configuration: configuration, logger: .disabled,
                                  hooks: TransportHooks(assertsShutdownBeforeDeinit: false))
        pipeline = ImagePipeline(downloader: transport, disk: disk)
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// The rest of `body` from a `Range: bytes=N-` whose `If-Range` is `etag`, tagged `answerTag`
    /// (default: `etag`), else nil.
    static func rest(of body: [UInt8], for request: TestHTTPServer.RequestHead, ifRange etag: String,
                     answerTag: String? = nil) -> TestHTTPServer.Response? {
        guard let range = request.header("Range"), request.header("If-Range") == etag, range.hasPrefix("bytes="), range.hasSuffix("-"),
              let start = Int(range.dropFirst(6).dropLast()), start < body.count else { return nil }
        return .headers(206, ["ETag: \(answerTag ?? etag)", "Content-Range: bytes \(start)-\(body.count - 1)/\(body.count)"], Array(body[start...]))
    }

    // MARK: - Item 3: a resume never splices two versions

    @Test func a206ForAnotherVersionIsNeverSplicedOntoKeptBytes() async throws {
        let kept = Array(Self.imageA.prefix(300_000))
        _ = try disk.savePartial(kept, for: url("/v"), validator: "\"A\"", totalLength: Self.imageA.count)
        // The server now has version B: it answers the range with B's bytes, a correct range, ETag "B".
        server.route("/v", .request { request in
            if request.header("Range") != nil {
                return .headers(206, ["ETag: \"B\"", "Content-Range: bytes 300000-599999/600000"], Array(Self.imageB[300_000...]))
            }
            return .headers(200, ["ETag: \"B\"", "Content-Type: image/png"], Self.imageB)
        })
        let image = try await pipeline.image(for: url("/v"))
        #expect(image.bytes == Self.imageB, "the image served is B, whole, not A's start and B's end")
        #expect(image.resumedBytes == 0)
        let requests = server.requests("/v")
        #expect(requests.count == 2 && requests[0].header("Range") == "bytes=300000-" && requests[1].header("Range") == nil)
        await pipeline.flush()
        #expect(disk.image(for: url("/v")) == Self.imageB && disk.partial(for: url("/v")) == nil)
        // The refused 206 was stopped at its first bytes: at most one read of it was received.
        #expect(image.failedBytes < 300_000, "\(image.failedBytes)")
        #expect(pipeline.statistics.resume.resumed == 0)
    }

    @Test(arguments: [
        ("no ETag", ["Content-Range: bytes 300000-599999/600000"]),
        ("a weak ETag", ["ETag: W/\"A\"", "Content-Range: bytes 300000-599999/600000"]),
        ("another range", ["ETag: \"A\"", "Content-Range: bytes 300001-599999/600000"]),
    ])
    func a206ThatCannotBeCheckedIsNeverSpliced(_ label: String, _ headers: [String]) async throws {
        _ = try disk.savePartial(Array(Self.imageA.prefix(300_000)), for: url("/w"), validator: "\"A\"", totalLength: Self.imageA.count)
        server.route("/w", .request { request in
            if request.header("Range") != nil { return .headers(206, headers, Array(Self.imageB[300_000...])) }
            return .headers(200, ["ETag: \"B\""], Self.imageB)
        })
        let image = try await pipeline.image(for: url("/w"))
        #expect(image.bytes == Self.imageB, "\(label)")
        #expect(server.hits("/w") == 2)
    }

    @Test func aKeptPartialOfTheSameVersionIsStillCompleted() async throws {
        _ = try disk.savePartial(Array(Self.imageA.prefix(300_000)), for: url("/same"), validator: "\"A\"", totalLength: Self.imageA.count)
        server.route("/same", .request { request in
            Self.rest(of: Self.imageA, for: request, ifRange: "\"A\"") ?? .headers(200, ["ETag: \"A\""], Self.imageA)
        })
        let image = try await pipeline.image(for: url("/same"))
        #expect(image.bytes == Self.imageA && image.resumedBytes == 300_000 && server.hits("/same") == 1)
        #expect(server.bytesSent("/same") < 300_000 + 1_000)
    }

    // MARK: - Item 4: a body cut short is never an image

    @Test func aBodyEndingWhenTheConnectionClosesHalfwayIsNotAnImage() async throws {
        server.route("/close", .untilClose(Array(Self.imageA.prefix(300_000))))
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/close")) }
        guard error?.code.kind == .incompleteImage else { Issue.record("\(String(describing: error))"); return }
        await pipeline.flush()
        #expect(disk.image(for: url("/close")) == nil && pipeline.memory.image(for: url("/close")) == nil)
    }

    @Test func aContentLengthSmallerThanTheImageIsNotAnImage() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 300000\r\nConnection: close\r\n\r\n"
        server.route("/short", .raw(Array(head.utf8) + Self.imageA))
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/short")) }
        guard error?.code.kind == .incompleteImage else { Issue.record("\(String(describing: error))"); return }
        await pipeline.flush()
        #expect(disk.image(for: url("/short")) == nil)
    }

    /// The excess bytes a short `Content-Length` leaves in a kept-alive connection are never read
    /// as the next response: the retries open connections of their own and fail for the real
    /// cause, and the next request elsewhere is answered whole.
    @Test func aShortContentLengthsConnectionIsNotReused() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 300000\r\n\r\n"
        server.route("/short", .rawKeepingConnection(Array(head.utf8) + Self.imageA))
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/short")) }
        guard error?.code.kind == .incompleteImage else { Issue.record("\(String(describing: error))"); return }
        #expect(error?.attempts == 3 && server.hits("/short") == 3 && server.connections == 3)
        let small = TestImages.png(size: 4714, seed: 5)
        server.route("/next", .ok(small))
        let answer = try await pipeline.image(for: url("/next"))
        #expect(answer.bytes == small && server.connections == 4)
    }

    @Test func twoDifferentContentLengthsAreARefusedResponse() async throws {
        let small = TestImages.png(size: 4714, seed: 5)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 4714\r\nContent-Length: 10\r\n\r\n"
        server.route("/two", .raw(Array(head.utf8) + small))
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/two")) }
        guard error?.code.kind == .invalidResponse, let detail = error?.code.detail else { Issue.record("\(String(describing: error))"); return }
        #expect(detail.contains("4714") && detail.contains("10"))
        await pipeline.flush()
        #expect(disk.image(for: url("/two")) == nil)
        // The connection whose framing was in doubt is not reused: the next request opens another.
        server.route("/next", .ok(small))
        let connections = server.connections
        _ = try await pipeline.image(for: url("/next"))
        #expect(server.connections == connections + 1)
    }

    // MARK: - Item 5: a retry resumes from the bytes already received

    @Test func aRetryResumesFromTheBytesTheFailedAttemptReceived() async throws {
        server.route("/cut", .request { request in
            if request.hit == 1 { return .resetAfter(200, ["ETag: \"A\"", "Content-Type: image/png"], Self.imageA, sent: 300_000) }
            return Self.rest(of: Self.imageA, for: request, ifRange: "\"A\"") ?? .headers(200, ["ETag: \"A\""], Self.imageA)
        })
        let image = try await pipeline.image(for: url("/cut"))
        #expect(image.bytes == Self.imageA)
        let requests = server.requests("/cut")
        // The reset may discard what the server had not sent yet: the rest is asked for from
        // wherever the first attempt ended.
        let resumedAt = try #require(requests.last?.header("Range").flatMap { Int($0.dropFirst(6).dropLast()) })
        #expect(requests.count == 2 && resumedAt > 0 && requests[1].header("If-Range") == "\"A\"", "\(requests.map { $0.headers["range"] ?? "-" })")
        // Every byte received is part of the image: 600 KB in all, nothing counted twice.
        #expect(image.failedBytes == 0 && image.retries == 1 && image.resumedBytes == 0)
    }

    @Test func aRetryAnsweredForAnotherVersionGetsTheWholeNewImage() async throws {
        server.route("/moved", .request { request in
            if request.hit == 1 { return .resetAfter(200, ["ETag: \"A\"", "Content-Type: image/png"], Self.imageA, sent: 300_000) }
            if let range = request.header("Range"), let start = Int(range.dropFirst(6).dropLast()) {
                return .headers(206, ["ETag: \"B\"", "Content-Range: bytes \(start)-599999/600000"], Array(Self.imageB[start...]))
            }
            return .headers(200, ["ETag: \"B\""], Self.imageB)
        })
        let image = try await pipeline.image(for: url("/moved"))
        #expect(image.bytes == Self.imageB && server.hits("/moved") == 3)
        // The first attempt's bytes were for nothing (and at most a read of the refused 206).
        let resumedAt = try #require(server.requests("/moved")[1].header("Range").flatMap { Int($0.dropFirst(6).dropLast()) })
        #expect(image.failedBytes >= resumedAt && image.failedBytes < resumedAt + 300_000, "\(image.failedBytes)")
    }

    @Test func onACostlyLinkABodyThatCannotBeResumedIsNotDownloadedAgain() async throws {
        // No validator: the 300 KB received cannot be resumed from.
        server.route("/plain", .resetAfter(200, ["Content-Type: image/png"], Self.imageA, sent: 300_000))
        let costly = NetworkState(.cellular, isExpensive: true)
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/plain"), network: costly) }
        let received = error?.receivedBytes ?? 0
        #expect(server.hits("/plain") == 1 && error?.attempts == 1 && received > 0 && received <= 300_000, "\(received)")
        // On a free link the same failure is retried as the transport is configured.
        let free = try await #require(throws: FetchError.self) { try await pipeline.image(for: url("/plain"), network: NetworkState(.wifi)) }
        #expect(server.hits("/plain") == 4 && free.attempts == 3)
    }

    @Test func onACostlyLinkAResumableBodyIsResumed() async throws {
        server.route("/res", .request { request in
            if request.hit == 1 { return .resetAfter(200, ["ETag: \"A\"", "Content-Type: image/png"], Self.imageA, sent: 300_000) }
            return Self.rest(of: Self.imageA, for: request, ifRange: "\"A\"") ?? .status(500)
        })
        let image = try await pipeline.image(for: url("/res"), network: NetworkState(.cellular, isExpensive: true))
        #expect(image.bytes == Self.imageA && server.hits("/res") == 2 && image.failedBytes == 0)
    }

    @Test func aRetryScopeOfNeverMakesOneAttempt() async throws {
        server.route("/503", .status(503))
        let request = DownloadRequest(url: url("/503"), retries: .never)
        let error = await #expect(throws: FetchError.self) { try await transport.response(to: request) }
        #expect(error?.code == .httpStatus(503) && server.hits("/503") == 1)
        // Nothing of the image came: without redownloading, a 503 is retried.
        server.route("/503b", .dynamic { hit in hit == 1 ? .status(503) : .ok(Self.imageA) })
        let answer = try await transport.response(to: DownloadRequest(url: url("/503b"), retries: .withoutRedownloading))
        #expect(answer.body == Self.imageA && server.hits("/503b") == 2)
    }

    // MARK: - Item 6: a redirect target is checked as an item's URL is

    @Test func aRedirectToAURLWithCredentialsIsRefusedAndNothingIsSent() async throws {
        server.route("/target", .ok(Self.imageA))
        server.route("/creds", .redirect("http://user:secretpw@127.0.0.1:\(server.port)/target"))
        let error = await #expect(throws: FetchError.self) { try await pipeline.image(for: url("/creds")) }
        guard error?.code.kind == .redirectRefused, let message = error?.code.detail else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("credentials") && !"\(error!)".contains("secretpw"))
        #expect(server.hits("/target") == 0)
    }

    @Test(arguments: ["ftp://127.0.0.1/x.png", "file:///etc/passwd", "http://127.0.0.1:0/x.png"])
    func aRedirectToAURLThatIsNotAllowedIsRefused(_ target: String) async throws {
        server.route("/bad", .headers(302, ["Location: \(target)"]))
        let error = await #expect(throws: FetchError.self) { try await transport.download(url("/bad")) }
        guard error?.code.kind == .redirectRefused else { Issue.record("\(target): \(String(describing: error))"); return }
    }

    @Test func relativeRedirectsAreFollowedAndLoopsEnd() async throws {
        server.route("/target", .ok(Self.imageA))
        server.route("/rel", .headers(301, ["Location: /target"]))
        #expect(try await transport.download(url("/rel")) == Self.imageA)
        server.route("/loop", .headers(302, ["Location: /loop"]))
        let error = await #expect(throws: FetchError.self) { try await transport.download(url("/loop")) }
        guard error?.code.kind == .redirectRefused, let message = error?.code.detail else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("redirects") && server.hits("/loop") == transport.configuration.maximumRedirects + 1)
    }
}

/// A transport that cannot start (issue 16 item 7): no multi handle (no descriptor left), or no
/// thread: every download fails with `outOfResources`, a shutdown returns at once, nothing traps.
struct TransportStartFailureTests {
    static let url = ImageURL("http://127.0.0.1:9/x.png")!

    @Test func noMultiHandleIsAnErrorNotATrap() async throws {
        let transport = CurlTransport(configuration: .standard, logger: .disabled, hooks: TransportHooks(makeMultiHandle: { nil }))
        let error = await #expect(throws: FetchError.self) { try await transport.download(Self.url) }
        guard error?.code.kind == .outOfResources, let message = error?.code.detail else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("cannot start the transport") && error?.isRemote == false)
        await transport.shutdown()
        #expect(transport.scheduler.openHandles.load(ordering: .acquiring) == 0)
    }

    @Test func noThreadIsAnErrorNotATrap() async throws {
        let hooks = TransportHooks(startThread: { _ throws(OwnedThread.StartFailure) in throw OwnedThread.StartFailure(code: EAGAIN) })
        let transport = CurlTransport(configuration: .standard, logger: .disabled, hooks: hooks)
        let error = await #expect(throws: FetchError.self) {
            try await transport.response(to: DownloadRequest(url: Self.url))
        }
        guard error?.code.kind == .outOfResources, let message = error?.code.detail else { Issue.record("\(String(describing: error))"); return }
        #expect(message.contains("thread"))
        await transport.shutdown()
    }
}

/// Checkpoints report each byte once (issue 16 probe: every 64 KiB the whole body so far was
/// copied and saved again, O(n²) in memory, time and disk writes).
struct CheckpointReportTests {
    @Test func eachByteIsReportedOnceAndTheReportsFollowEachOther() async throws {
        let body = TestImages.png(size: 3 << 20, seed: 4)
        let server = try TestHTTPServer(routes: ["/big": .stall(200, ["ETag: \"c\"", "Content-Type: image/png"], body, sent: (5 << 20) / 2)])
        let transport = CurlTransport(configuration: .patient, logger: .disabled, hooks: TransportHooks(assertsShutdownBeforeDeinit: false))
        let reports = LockedList<BodyCheckpoints.Partial>()
        let request = DownloadRequest(url: ImageURL(server.url("/big"))!, checkpoints: BodyCheckpoints(every: 64 << 10) { reports.append($0) })
        let load = Task { try await transport.response(to: request) }
        #expect(await waitUntil { (reports.values.last?.length ?? 0) >= 2 << 20 })
        load.cancel()
        _ = try? await load.value
        await transport.shutdown()
        let all = reports.values
        var expected = 0
        for report in all {
            #expect(report.offset == expected, "a report starts where the one before ended")
            expected = report.length
        }
        #expect(all.reduce(0) { $0 + $1.bytes.count } == expected)
        #expect(Array(body.prefix(expected)) == all.flatMap(\.bytes), "the reports are the body's first bytes")
        // The last report came when the transfer was cancelled.
        #expect(all.last?.isFinal == true && all.dropLast().allSatisfy { !$0.isFinal })
    }
}
