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

/// Resumable downloads through the pipeline, the real transport and the loopback server: a
/// transfer cancelled mid-body keeps its partial body; the next load asks for the rest with
/// `Range` + `If-Range` and completes it from a 206, starts over on a 200 (changed validator),
/// and discards it when the range does not match.
struct ResumeTests {
    static let transport = CurlTransport(configuration: .patient)
    let server: TestHTTPServer
    let folder = TemporaryFolder()
    let disk: DiskCache
    let pipeline: ImagePipeline
    static let body = TestImages.png(size: 300_000, seed: 3)

    init() throws {
        server = try TestHTTPServer()
        disk = try DiskCache(folder: folder.path)
        pipeline = ImagePipeline(downloader: Self.transport, disk: disk)
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// The first request sends half of `body` and stalls (so that it is cancelled mid-body); later ones
    /// answer a `Range` whose `If-Range` matches `etag` with 206 and `contentRange` (default: the
    /// right one), anything else with 200 and `replacement` (default `body`) tagged `etag`.
    static func resumableRoute(_ body: [UInt8], etag: String = "\"r1\"", firstETag: String = "\"r1\"",
                               replacement: [UInt8]? = nil, contentRange: String? = nil) -> TestHTTPServer.Response {
        .request { request in
            if request.hit == 1 {
                return .stall(200, ["ETag: \(firstETag)", "Content-Type: image/png"], body, sent: body.count / 2)
            }
            if let range = request.header("Range"), request.header("If-Range") == etag,
               range.hasPrefix("bytes="), range.hasSuffix("-"), let start = Int(range.dropFirst(6).dropLast()), start < body.count {
                let value = contentRange ?? "bytes \(start)-\(body.count - 1)/\(body.count)"
                return .headers(206, ["ETag: \(etag)", "Content-Range: \(value)"], Array(body[start...]))
            }
            return .headers(200, ["ETag: \(etag)", "Content-Type: image/png"], replacement ?? body)
        }
    }

    /// Starts loading `path`, cancels it once more than half the body was sent, and waits until
    /// its partial body is kept; returns the bytes kept.
    func loadAndCancelMidBody(_ path: String) async throws -> Int {
        let load = Task { try await pipeline.image(for: url(path)) }
        // Two checkpoints are on disk (128 KiB of the 150 KB sent), and the transfer waits.
        #expect(await waitUntil { (disk.partial(for: url(path))?.offset ?? 0) >= 128 << 10 })
        load.cancel()
        await #expect(throws: FetchError(url: url(path), code: .cancelled)) { try await load.value }
        // The waiter returned at once; the transfer reports its last bytes as it winds down.
        #expect(await waitUntil { pipeline.statistics.inFlight == 0 })
        await pipeline.flush()   // waits for the partial bodies' saves too
        let kept = try #require(await offThePool { disk.partial(for: url(path))?.offset })
        #expect(kept >= 64 << 10)
        return kept
    }

    @Test func aCancelledTransferResumesWithRangeAndIfRangeAnd206() async throws {
        server.route("/r", Self.resumableRoute(Self.body))
        let kept = try await loadAndCancelMidBody("/r")
        #expect(await waitUntil { server.responsesEnded("/r") == 1 })   // the first drip noticed the client left
        let sentBefore = server.bytesSent("/r")
        let image = try await pipeline.image(for: url("/r"))
        #expect(image.source == .network && image.bytes == Self.body)
        let request = try #require(server.requests("/r").last)
        #expect(request.header("Range") == "bytes=\(kept)-" && request.header("If-Range") == "\"r1\"")
        #expect(request.header("Accept-Encoding") == "identity")
        #expect(server.bytesSent("/r") - sentBefore < Self.body.count - kept + 1_000)
        #expect(pipeline.statistics.resume == { var s = ResumeStatistics(); s.resumed = 1; s.savedBytes = kept; return s }())
        await pipeline.flush()   // the delivered image's disk write is queued, not yet done (a TSan run saw it not there)
        #expect(disk.partial(for: url("/r")) == nil && disk.image(for: url("/r")) == Self.body)
    }

    @Test func aChangedEntityTagMakesTheServerSendItAllAgainAndThePartialIsDropped() async throws {
        let changed = TestImages.png(size: 280_000, seed: 8)
        server.route("/c", Self.resumableRoute(Self.body, etag: "\"r2\"", replacement: changed))
        _ = try await loadAndCancelMidBody("/c")
        let image = try await pipeline.image(for: url("/c"))
        #expect(image.bytes == changed)
        #expect(server.requests("/c").last?.header("If-Range") == "\"r1\"")
        #expect(pipeline.statistics.resume.resumed == 0)
        #expect(await waitUntil { disk.partial(for: url("/c")) == nil })
        await pipeline.flush()
        #expect(disk.image(for: url("/c")) == changed)
    }

    @Test func a206WithAnotherRangeDiscardsThePartialAndStartsOver() async throws {
        server.route("/m", Self.resumableRoute(Self.body, contentRange: "bytes 1-\(Self.body.count - 1)/\(Self.body.count)"))
        _ = try await loadAndCancelMidBody("/m")
        let image = try await pipeline.image(for: url("/m"))
        #expect(image.bytes == Self.body)
        let requests = server.requests("/m")
        #expect(requests.count == 3 && requests[2].header("Range") == nil)
        await pipeline.writes?.thread.run {}
        #expect(pipeline.statistics.resume.resumed == 0 && disk.partial(for: url("/m")) == nil)
    }

    @Test func aBodyWithoutAStrongValidatorIsNotKept() async throws {
        server.route("/w", Self.resumableRoute(Self.body, firstETag: "W/\"weak\""))
        let load = Task { try await pipeline.image(for: url("/w")) }
        #expect(await waitUntil { server.bytesSent("/w") >= Self.body.count / 2 })
        load.cancel()
        _ = try? await load.value
        #expect(await waitUntil { pipeline.statistics.inFlight == 0 })
        await pipeline.writes?.thread.run {}
        #expect(disk.partial(for: url("/w")) == nil)
    }
}
