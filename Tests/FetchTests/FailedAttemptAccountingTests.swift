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

/// The body bytes received by attempts that failed (a body cut short, an error page, a stall too
/// slow, a cancelled transfer), in the data accounting: counted over loopback with the real
/// transport, pipeline and recorder, under the decision's link, once (a body kept for resuming
/// is not counted again by the download that resumes it), and kept by the ledger.
struct FailedAttemptAccountingTests {
    let server: TestHTTPServer
    let recorder = DataUsageRecorder()

    init() throws {
        server = try TestHTTPServer()
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    func loader(_ network: NetworkState, pipeline: ImagePipeline) -> ImageLoader {
        ImageLoader(policy: .default, reachability: FixedReachability(network), settings: InMemorySettingsStore(),
                    pipeline: pipeline, usage: recorder)
    }

    static func retrying(_ attempts: Int) -> TransportConfiguration {
        var configuration = TransportConfiguration.patient
        configuration.retry = RetryPolicy(attempts: attempts, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(2))
        return configuration
    }

    @Test func aBodyCutShortThenRetriedCountsTheFailedBytesWithTheSuccess() async throws {
        let body = TestImages.png(size: 200_000, seed: 5)
        // The first answer declares the whole body, sends 64 KiB and closes: curl 18, retried.
        server.route("/flaky", .dynamic { hit in hit == 1 ? .cutShort(declared: body.count, Array(body.prefix(64 << 10))) : .ok(body) })
        try await CurlTransport.withTransport(configuration: Self.retrying(3)) { transport in
            let loader = loader(NetworkState(.wifi), pipeline: ImagePipeline(downloader: transport, disk: nil))
            let item = ImageItem(id: "flaky", original: url("/flaky"))
            guard case .imageReady(_, _, let image) = await loader.load(item, decision: try loader.decide(item)) else {
                Issue.record("the retried download did not succeed")
                return
            }
            #expect(image.bytes == body && image.retries == 1 && image.failedBytes == 64 << 10)
        }
        let usage = recorder.usage
        #expect(usage.failedBytes == [DataUsage.Link(.wifi): 64 << 10])
        #expect(usage.downloadedBytes() == body.count && usage.retries() == 1)
        #expect(usage.receivedBytes() == body.count + 64 << 10)
        #expect(usage.receivedBytes { $0.kind == .cellular } == 0)
        // What the server sent, less the two responses' header fields.
        let headers = server.bytesSent("/flaky") - usage.receivedBytes()
        #expect(headers > 0 && headers < 400, "\(headers) bytes of header fields?")
    }

    @Test func aDownloadThatFailsForGoodStillCountsWhatArrived() async throws {
        let body = TestImages.png(size: 100_000, seed: 6)
        server.route("/cut", .cutShort(declared: body.count, Array(body.prefix(30_000))))
        let page = Array(repeating: UInt8(ascii: "x"), count: 2_000)
        server.route("/busy", .status(503, page, contentType: "text/html"))
        try await CurlTransport.withTransport(configuration: Self.retrying(3)) { transport in
            let loader = loader(NetworkState(.wired), pipeline: ImagePipeline(downloader: transport, disk: nil))
            for (path, each) in [("/cut", 30_000), ("/busy", 2_000)] {
                let item = ImageItem(id: path, original: url(path))
                guard case .failed(_, let error, _) = await loader.load(item, decision: try loader.decide(item)) else {
                    Issue.record("\(path) did not fail")
                    continue
                }
                let received = error.receivedBytes
                #expect(error.attempts == 3)
                #expect(received == 3 * each, "\(path)")
                #expect(server.hits(path) == 3)
            }
        }
        let usage = recorder.usage
        let expected = 96_000   // 3 × 30,000 cut short, 3 × 2,000 of error page
        #expect(usage.failedBytes == [DataUsage.Link(.wired): expected])
        #expect(usage.downloadedBytes() == 0)
        #expect(usage.receivedBytes() == expected)
        #expect(usage.retries() == 4)
    }

    @Test func aStalledTransferTooSlowCountsWhatArrived() async throws {
        let body = TestImages.png(size: 100_000, seed: 7)
        server.route("/stall", .stall(200, ["Content-Type: image/png"], body, sent: 40_000))
        var configuration = Self.retrying(1)
        configuration.lowSpeedLimit = 1000
        configuration.lowSpeedTime = .seconds(1)
        try await CurlTransport.withTransport(configuration: configuration) { transport in
            let loader = loader(NetworkState(.cellular), pipeline: ImagePipeline(downloader: transport, disk: nil))
            let item = ImageItem(id: "stall", original: url("/stall"))
            guard case .failed(_, let error, _) = await loader.load(item, decision: try loader.decide(item)) else {
                Issue.record("the stalled download did not fail")
                return
            }
            guard error.code.curlCode == 28 else {
                Issue.record("\(error)")
                return
            }
            #expect(error.receivedBytes == 40_000)
        }
        #expect(recorder.usage.failedBytes == [DataUsage.Link(.cellular): 40_000])
        #expect(recorder.usage.receivedBytes { $0.kind == .cellular } == 40_000)
    }

    /// A load cancelled mid-body keeps its partial body; its bytes are counted once, by the
    /// pipeline (its waiter left first), and the download that resumes it counts the rest only:
    /// every byte the server sent is counted once.
    @Test func aCancelledThenResumedBodyIsCountedOnce() async throws {
        let resume = try ResumeTests()
        resume.server.route("/r", ResumeTests.resumableRoute(ResumeTests.body))
        let loader = loader(NetworkState(.wifi), pipeline: resume.pipeline)   // sets the pipeline's backgroundUsage
        let item = ImageItem(id: "r", original: resume.url("/r"))
        let decision = try loader.decide(item)
        let first = Task { await loader.load(item, decision: decision) }
        #expect(await waitUntil { (resume.disk.partial(for: resume.url("/r"))?.offset ?? 0) >= 128 << 10 })
        first.cancel()
        guard case .failed(_, let error, _) = await first.value, error.code == .cancelled else {
            Issue.record("the load was not cancelled")
            return
        }
        #expect(await waitUntil { resume.pipeline.statistics.inFlight == 0 && recorder.usage.failedBytes() > 0 })
        await resume.pipeline.flush()
        let kept = try #require(await offThePool { resume.disk.partial(for: resume.url("/r"))?.offset })
        // The transfer stopped with what it received; its last report kept all of it.
        #expect(recorder.usage.failedBytes == [DataUsage.Link(.wifi): kept])

        guard case .imageReady(_, _, let image) = await loader.load(item, decision: decision) else {
            Issue.record("the resumed download did not succeed")
            return
        }
        #expect(image.bytes == ResumeTests.body && image.resumedBytes == kept && image.failedBytes == 0)
        let usage = recorder.usage
        #expect(usage.resumedBytes() == kept)
        #expect(usage.downloadedBytes() == ResumeTests.body.count - kept, "the rest only: the kept part was counted when it arrived")
        #expect(usage.receivedBytes() == ResumeTests.body.count)
        let headers = resume.server.bytesSent("/r") - usage.receivedBytes()
        #expect(headers > 0 && headers < 600, "\(headers) bytes of header fields?")
    }

    @Test func theLedgerKeepsFailedBytesAndReadsDaysWrittenBeforeThem() throws {
        let folder = TemporaryFolder()
        _ = try DiskCache(folder: folder.path)
        let ledger = DataUsageLedger(cacheFolder: folder.path)
        let day = try #require(UsageDay(parsing: "2026-11-24"))
        var usage = DataUsage()
        usage.addFailedBytes(65_536, on: .init(.cellular, isRoaming: true))
        usage.add(.init(bytes: 1_000, transfers: 1), for: .init(link: .init(.cellular, isRoaming: true), variant: .thumbnail, source: .network))
        #expect(usage.links == [.init(.cellular, isRoaming: true)] && !usage.isEmpty)
        _ = try ledger.add(usage, on: day)
        _ = try ledger.add(usage, on: day)
        let reading = ledger.read()
        #expect(reading.problems.isEmpty)
        #expect(reading.days[day]?.failedBytes == [.init(.cellular, isRoaming: true): 131_072])
        #expect(reading.days[day]?.receivedBytes { $0.isRoaming } == 133_072)
        let text = try String(contentsOfFile: folder.path + "/usage/2026-11-24.json", encoding: .utf8)
        #expect(text.contains(#""failedBytes":{"cellular,roaming":131072}"#))

        // Written before "failedBytes" existed: none.
        let older = try #require(UsageDay(parsing: "2026-11-22"))
        _ = try folder.write(#"{"format":"imgpolicy usage 1","day":"2026-11-22","loads":[],"originalsNotDownloaded":{},"retries":{"wifi":1},"resumedBytes":{}}"#,
                             to: "usage/2026-11-22.json")
        let again = ledger.read()
        #expect(again.problems.isEmpty && again.days[older]?.failedBytes() == 0 && again.days[older]?.retries() == 1)
        _ = try folder.write(#"{"format":"imgpolicy usage 1","day":"2026-11-21","loads":[],"originalsNotDownloaded":{},"retries":{},"failedBytes":{"wifi":9007199254740992}}"#,
                             to: "usage/2026-11-21.json")
        #expect(ledger.read().problems.count == 1, "a count past the bound is a damaged day")
    }
}
