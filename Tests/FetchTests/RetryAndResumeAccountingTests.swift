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

/// Retries and the bytes saved by resuming, in the data accounting: counted by the recorder from
/// real loads over loopback (the real transport and pipeline), under the decision's link, and
/// kept by the ledger.
struct RetryAndResumeAccountingTests {
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

    @Test func retriesAreCountedUnderTheDecisionsLinkWhetherTheDownloadThenSucceedsOrFails() async throws {
        var configuration = TransportConfiguration()
        configuration.retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(2))
        let transport = CurlTransport(configuration: configuration)
        let body = TestImages.png(size: 3_000)
        server.route("/flaky", .dynamic { hit in hit == 1 ? .status(503) : .ok(body) })
        server.route("/down", .status(503))
        let loader = loader(NetworkState(.wifi), pipeline: ImagePipeline(downloader: transport, disk: nil))
        let flaky = ImageItem(id: "flaky", original: url("/flaky"))
        guard case .imageReady(_, _, let image) = await loader.load(flaky, decision: try loader.decide(flaky)) else {
            Issue.record("the retried download did not succeed")
            await transport.shutdown()
            return
        }
        #expect(image.retries == 1 && image.bytes == body)
        #expect(recorder.usage.retries == [DataUsage.Link(.wifi): 1])
        let down = ImageItem(id: "down", original: url("/down"))
        guard case .failed(_, let error, _) = await loader.load(down, decision: try loader.decide(down)) else {
            Issue.record("the download did not fail")
            await transport.shutdown()
            return
        }
        #expect(error.attempts == 3)
        #expect(recorder.usage.retries(on: { $0.kind == .wifi }) == 3, "1 + the failed download's 2")
        #expect(server.hits("/down") == 3)
        await transport.shutdown()
    }

    @Test func aResumedDownloadCountsTheBytesKeptAsNotDownloadedAgain() async throws {
        let resume = try ResumeTests()
        resume.server.route("/r", ResumeTests.resumableRoute(ResumeTests.body))
        let kept = try await resume.loadAndCancelMidBody("/r")
        let loader = loader(NetworkState(.wired), pipeline: resume.pipeline)
        let item = ImageItem(id: "r", original: resume.url("/r"))
        guard case .imageReady(_, _, let image) = await loader.load(item, decision: try loader.decide(item)) else {
            Issue.record("the resumed download did not succeed")
            return
        }
        #expect(image.resumedBytes == kept && image.bytes == ResumeTests.body && image.retries == 0)
        #expect(recorder.usage.resumedBytes == [DataUsage.Link(.wired): kept])
        // This load downloaded the rest only: the kept part was received by the interrupted
        // transfer, counted then (here it ran before any recorder: see FailedAttemptAccountingTests).
        #expect(recorder.usage.downloadedBytes() == ResumeTests.body.count - kept)
        // A load from the cache afterwards saves nothing more.
        _ = await loader.load(item, decision: try loader.decide(item))
        #expect(recorder.usage.resumedBytes() == kept)
    }

    @Test func theLedgerKeepsRetriesAndResumedBytesAndReadsDaysWrittenBeforeThem() throws {
        let folder = TemporaryFolder()
        _ = try DiskCache(folder: folder.path)   // a ledger is kept in a cache folder only
        let ledger = DataUsageLedger(cacheFolder: folder.path)
        let day = try #require(UsageDay(parsing: "2026-11-23"))
        var usage = DataUsage()
        usage.addRetries(2, on: .init(.cellular))
        usage.addResumedBytes(150_000, on: .init(.wifi))
        var beyond = usage
        beyond.addResumedBytes(Int.max, on: .init(.wifi))
        #expect(beyond.resumedBytes(on: { $0.kind == .wifi }) == Int.max, "sums in memory saturate")
        // A usage past the bound no real usage reaches is never written (it could not be read back).
        #expect {
            try ledger.add(beyond, on: day)
        } throws: { ($0 as? DataUsageLedgerError)?.code == .writeFailed }
        #expect(ledger.read().days.isEmpty)
        _ = try ledger.add(usage, on: day)
        _ = try ledger.add(usage, on: day)
        let reading = ledger.read()
        #expect(reading.problems.isEmpty)
        #expect(reading.days[day]?.retries() == 4 && reading.days[day]?.resumedBytes() == 300_000)
        #expect(usage.links == [.init(.wifi), .init(.cellular)])

        let older = try #require(UsageDay(parsing: "2026-11-22"))
        _ = try folder.write(#"{"format":"imgpolicy usage 1","day":"2026-11-22","loads":[],"originalsNotDownloaded":{},"retries":{"wifi":1}}"#,
                         to: "usage/2026-11-22.json")
        let again = ledger.read()
        #expect(again.problems.isEmpty && again.days[older]?.retries() == 1 && again.days[older]?.resumedBytes() == 0)
        _ = try folder.write(#"{"format":"imgpolicy usage 1","day":"2026-11-21","loads":[],"originalsNotDownloaded":{},"retries":{},"resumedBytes":{"wifi":-3}}"#,
                         to: "usage/2026-11-21.json")
        #expect(ledger.read().problems.count == 1, "a negative count is a damaged day")
    }
}
