import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Pipeline
@testable import Transport
import FetchTesting
import Policy
import Support
import Testing
import TestSupport

extension ScriptedDownloader {
    /// A downloader answering each request with the response `answer` makes of it
    /// (`receivedRequests` remembers the requests).
    convenience init(responding answer: @escaping @Sendable (DownloadRequest) -> DownloadResponse) {
        self.init { .response(answer($0)) }
    }
}

/// The measurement and accounting stage alone.
struct LinkAccountingStageTests {
    let url = doubleURL("a")

    func response(timing: TransferTiming?) -> DownloadResponse {
        DownloadResponse(status: 200, body: [1], requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now(), timing: timing)
    }

    @Test func aResponseIsMeasuredOnlyWithItsFiguresAndANetwork() {
        let accounting = LinkAccounting(estimator: LinkEstimator())
        let timing = TransferTiming(bodyBytes: 1_000_000, totalSeconds: 1, firstByteSeconds: 0.05)
        accounting.measure(response(timing: timing), on: nil)
        accounting.measure(response(timing: nil), on: NetworkState(.wifi))
        #expect(accounting.estimate(for: NetworkState(.wifi)) == nil)
        accounting.measure(response(timing: timing), on: NetworkState(.wifi))
        #expect(accounting.estimate(for: NetworkState(.wifi)) != nil)
        #expect(LinkAccounting(estimator: nil).estimate(for: NetworkState(.wifi)) == nil)
    }

    @Test func backgroundCostsAreCountedOnlyWithARecorder() {
        let accounting = LinkAccounting(estimator: nil)
        accounting.recordUncounted(100, on: nil)                   // no recorder: nothing happens
        let recorder = DataUsageRecorder()
        accounting.backgroundUsage = recorder
        accounting.recordUncounted(100, on: nil)
        accounting.recordUncounted(0, on: nil)
        #expect(recorder.usage.failedBytes() == 100)
        #expect(recorder.usage.links.map(\.kind) == [.unknown])
        let replaced = FetchedImage(url: url, bytes: [1, 2, 3], source: .network, retries: 1, failedBytes: 5)
        accounting.recordBackgroundRevalidation(.success(replaced), variant: nil, on: NetworkState(.wifi))
        #expect(recorder.usage.downloadedBytes { $0.kind == .wifi } == 3)
        #expect(recorder.usage.retries { $0.kind == .wifi } == 1)
        let failure = FetchError(url: url, code: .httpStatus(503), attempts: 3, receivedBytes: 7)
        accounting.recordBackgroundRevalidation(.failure(failure), variant: nil, on: NetworkState(.cellular))
        #expect(recorder.usage.retries { $0.kind == .cellular } == 2)
        #expect(recorder.usage.failedBytes { $0.kind == .cellular } == 7)
    }
}

/// The resumable partial bodies stage alone, over a temporary disk cache.
struct PartialBodiesStageTests {
    let url = doubleURL("partial")
    let disk: TemporaryDiskCache
    let thread = BlockingWorkPool(label: "test.partials", width: 1, logger: .disabled)
    let stage: PartialBodies

    init() throws {
        disk = try TemporaryDiskCache()
        stage = PartialBodies(disk: disk.cache, thread: thread, clock: { HTTPDate.now() }, logger: .disabled)
    }

    @Test func aRequestWithNothingKeptAsksForTheBodyAsItIsWithCheckpoints() async {
        defer { disk.remove() }
        var request = DownloadRequest(url: url)
        let body = await stage.prepare(&request)
        #expect(request.resuming == nil && !body.resumes)
        #expect(request.headers.contains { $0.name == "Accept-Encoding" && $0.value == "identity" })
        #expect(request.checkpoints != nil)
    }

    @Test func aKeptPartialBodyIsResumedCountedAndDiscardedWhenTheBodyCameWhole() async throws {
        defer { disk.remove() }
        let kept = [UInt8](repeating: 7, count: max(64, disk.cache.partialLimits.minimumBytes))
        #expect(try disk.cache.savePartial(kept, for: url, validator: "\"v1\"", totalLength: kept.count * 2))
        var request = DownloadRequest(url: url)
        let body = await stage.prepare(&request)
        #expect(request.resuming?.bytes == kept && body.resumes)
        var response = DownloadResponse(status: 200, body: kept + kept, requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now())
        response.resumedBytes = kept.count
        stage.completed(body, response: response)
        #expect(stage.statistics.resumed == 1 && stage.statistics.savedBytes == kept.count)
        await thread.run {}
        #expect(disk.cache.partial(for: url) == nil)
    }
}

/// The revalidation stage, wired by a pipeline, called directly.
struct RevalidationStageTests {
    let url = doubleURL("r.png")
    let image = TestImages.png(size: 600)
    let disk: TemporaryDiskCache

    init() throws {
        disk = try TemporaryDiskCache()
    }

    /// Stores `image` tagged `"v1"`, stale (`max-age=0`), and returns it as the cache reads it.
    func storeStale() throws -> StoredImage {
        let freshness = HTTPFreshness(status: 200, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=0")],
                                      receivedAt: HTTPDate.now().adding(-60))
        _ = try disk.cache.store(image, for: url, freshness: freshness)
        return try #require(disk.cache.storedImage(for: url))
    }

    static func notModified(_ request: DownloadRequest) -> DownloadResponse {
        DownloadResponse(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=60")], body: [],
                         requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now())
    }

    @Test func a304KeepsTheStoredBytesAndSendsTheValidator() async throws {
        defer { disk.remove() }
        let downloader = ScriptedDownloader(responding: Self.notModified)
        let pipeline = ImagePipeline(downloader: downloader, disk: disk.cache)
        let stored = try storeStale()
        let shown = try await pipeline.revalidation.revalidate(url, stored, priority: RequestPriority(), network: nil)
        #expect(shown.source == .disk && shown.bytes == image)
        #expect(downloader.receivedRequests.first?.headers.contains { $0.name == "If-None-Match" && $0.value == "\"v1\"" } == true)
        #expect(pipeline.memory.image(for: url) == image)
        #expect(pipeline.statistics.downloads == 1)
    }

    @Test func inTheBackgroundOnceAtATimePerURLCountedAndAccounted() async throws {
        defer { disk.remove() }
        let replacement = TestImages.png(size: 700)
        let downloader = ScriptedDownloader(responding: { _ in
            DownloadResponse(status: 200, headers: [("ETag", "\"v2\"")], body: replacement, requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now())
        })
        let pipeline = ImagePipeline(downloader: downloader, disk: disk.cache)
        let recorder = DataUsageRecorder()
        pipeline.backgroundUsage = recorder
        let stored = try storeStale()
        pipeline.revalidation.revalidateInBackground(url, stored, network: NetworkState(.wifi), variant: nil)
        pipeline.revalidation.revalidateInBackground(url, stored, network: NetworkState(.wifi), variant: nil)
        await pipeline.revalidation.waitForRunning()
        let statistics = pipeline.revalidation.statistics
        #expect(statistics.started == 1 && statistics.replaced == 1 && statistics.ended == 1)
        #expect(downloader.receivedRequests.count == 1)
        #expect(downloader.receivedRequests.first?.priority.value == LoadPriority(.prefetch))
        #expect(recorder.usage.downloadedBytes { $0.kind == .wifi } == replacement.count)
        #expect(pipeline.memory.image(for: url) == replacement)
    }
}

/// The lookup stage alone: memory first, then the disk, copied into memory unless it must be
/// revalidated first.
struct CacheLookupStageTests {
    @Test func aDiskHitIsCopiedIntoMemoryUnlessItMustBeRevalidated() async throws {
        let disk = try TemporaryDiskCache()
        defer { disk.remove() }
        let memory = MemoryCache()
        let lookup = CacheLookup(memory: memory, disk: disk.cache, readers: BlockingWorkPool(label: "test.readers", width: 1, logger: .disabled),
                                 http: .standard)
        let (fresh, mustRevalidate) = (doubleURL("fresh"), doubleURL("no-cache"))
        _ = try disk.cache.store([1], for: fresh, freshness: HTTPFreshness(status: 200, headers: [("Cache-Control", "max-age=60")], receivedAt: HTTPDate.now()))
        _ = try disk.cache.store([2], for: mustRevalidate, freshness: HTTPFreshness(status: 200, headers: [("Cache-Control", "no-cache"), ("ETag", "\"a\"")], receivedAt: HTTPDate.now()))
        #expect(lookup.memoryHit(fresh) == nil)
        #expect(await lookup.diskHolds(fresh))
        #expect(await lookup.storedImage(for: fresh)?.bytes == [1])
        #expect(lookup.memoryHit(fresh)?.source == .memory)
        let stored = try #require(await lookup.storedImage(for: mustRevalidate))
        #expect(lookup.freshness(of: stored) == .mustRevalidate)
        #expect(lookup.memoryHit(mustRevalidate) == nil)
        #expect(lookup.contains(mustRevalidate) && lookup.contains(fresh))
        #expect(!lookup.contains(doubleURL("absent")))
    }
}

/// The download stage, wired by a pipeline without a disk cache, called directly.
struct DownloadStageTests {
    let url = doubleURL("d.png")

    @Test func aWholeImageIsKeptInMemoryAndCountedWithTheNegotiationHeaders() async throws {
        let image = TestImages.png(size: 500)
        let downloader = ScriptedDownloader(responding: { _ in
            DownloadResponse(status: 200, body: image, requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now(), attempts: 2,
                             failedAttemptBytes: 9)
        })
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let fetched = try await pipeline.transfer.download(url, priority: RequestPriority(), network: NetworkState(.wifi))
        #expect(fetched.source == .network && fetched.bytes == image)
        #expect(fetched.retries == 1 && fetched.failedBytes == 9)
        #expect(pipeline.memory.image(for: url) == image)
        #expect(pipeline.transfer.downloads == 1)
        #expect(downloader.receivedRequests.first?.headers.contains { $0.name == "Accept" } == true)
        // Without a disk cache nothing is resumable: the body is asked for as the server likes.
        #expect(downloader.receivedRequests.first?.headers.contains { $0.name == "Accept-Encoding" } == false)
    }

    @Test func aBodyCutShortIsRefusedAndItsBytesCountAsReceived() async {
        let cut = Array(TestImages.png(size: 500).prefix(100))
        let downloader = ScriptedDownloader(responding: { _ in
            DownloadResponse(status: 200, body: cut, requestedAt: HTTPDate.now(), receivedAt: HTTPDate.now(),
                             failedAttemptBytes: 10)
        })
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        do {
            _ = try await pipeline.transfer.download(url, priority: RequestPriority(), network: nil)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.receivedBytes == 110)
        }
        #expect(pipeline.memory.image(for: url) == nil)
    }
}
