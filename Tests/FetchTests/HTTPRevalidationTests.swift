import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Synchronization
import Testing
import TestSupport

/// A wall clock the test moves by hand (seconds since 1970).
final class TestWallClock: Sendable {
    private let seconds = Atomic<Int64>(1_800_000_000)
    var now: HTTPDate { HTTPDate(secondsSince1970: seconds.load(ordering: .acquiring)) }
    func advance(_ delta: Int64) { seconds.add(delta, ordering: .acquiringAndReleasing) }
}

/// HTTP caching through the pipeline, the real transport and the loopback server: stale entries
/// revalidated with `If-None-Match` / `If-Modified-Since`, 304 and 200 answers, `no-store`,
/// and when revalidation happens per network state. Time is an injected wall clock.
struct HTTPRevalidationTests {
    static let transport = CurlTransport()
    let server: TestHTTPServer
    let folder = TemporaryFolder()
    let clock = TestWallClock()
    let pipeline: ImagePipeline
    let disk: DiskCache

    init() throws {
        server = try TestHTTPServer()
        disk = try DiskCache(folder: folder.path)
        let clock = self.clock
        pipeline = ImagePipeline(downloader: Self.transport, disk: disk, http: HTTPOptions(clock: { clock.now }))
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// A route with an `ETag` (`"v1"`) and `max-age=60`: 304 to a matching `If-None-Match`.
    static func entityTagRoute(_ body: [UInt8], cacheControl: String = "max-age=60") -> TestHTTPServer.Response {
        .request { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return .headers(304, ["ETag: \"v1\"", "Cache-Control: \(cacheControl)"])
            }
            return .headers(200, ["Content-Type: image/png", "ETag: \"v1\"", "Cache-Control: \(cacheControl)"], body)
        }
    }

    /// Loads `path` into the disk cache, then forgets it in memory.
    /// `old` tagged `"v1"` the first time, `new` tagged `"v2"` afterwards (both `max-age=60`): a
    /// revalidation after the first load is answered 200 with the new image.
    static func replacedRoute(_ old: [UInt8], by new: [UInt8]) -> TestHTTPServer.Response {
        .dynamic { hit in
            hit == 1 ? .headers(200, ["ETag: \"v1\"", "Cache-Control: max-age=60"], old)
                     : .headers(200, ["ETag: \"v2\"", "Cache-Control: max-age=60"], new)
        }
    }

    func loadAndKeepOnDiskOnly(_ path: String) async throws {
        #expect(try await pipeline.image(for: url(path)).source == .network)
        await pipeline.flush()
        pipeline.memory.purge()
    }

    @Test func aStaleEntryWithAnEntityTagIsShownThenRevalidatedBy304() async throws {
        let image = TestImages.png(size: 4000)
        server.route("/e", Self.entityTagRoute(image))
        try await loadAndKeepOnDiskOnly("/e")
        clock.advance(120)   // stale
        let shown = try await pipeline.image(for: url("/e"))
        #expect(shown.source == .disk && shown.bytes == image)
        #expect(await waitUntil { pipeline.statistics.revalidation.notModified == 1 })
        #expect(server.requests("/e").last?.header("If-None-Match") == "\"v1\"")
        // The refreshed freshness is on disk: fresh again, and the bytes kept.
        #expect(disk.freshness(of: url("/e"))?.state(at: clock.now) == .fresh)
        pipeline.memory.purge()
        #expect(try await pipeline.image(for: url("/e")).bytes == image)
        #expect(server.hits("/e") == 2)
    }

    @Test func aStaleEntryWithLastModifiedIsRevalidatedBy304() async throws {
        let image = TestImages.png(size: 4000, seed: 2)
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        server.route("/m", .request { request in
            if request.header("If-Modified-Since") == modified {
                return .headers(304, ["Cache-Control: max-age=60"])
            }
            return .headers(200, ["Content-Type: image/png", "Last-Modified: \(modified)", "Cache-Control: max-age=60"], image)
        })
        try await loadAndKeepOnDiskOnly("/m")
        clock.advance(61)
        #expect(try await pipeline.image(for: url("/m")).source == .disk)
        #expect(await waitUntil { pipeline.statistics.revalidation.notModified == 1 })
        #expect(server.requests("/m").last?.header("If-Modified-Since") == modified)
        #expect(disk.freshness(of: url("/m"))?.state(at: clock.now) == .fresh)
    }

    @Test func a304WithoutACachedEntryIsAnErrorNeverAnEmptyImage() async throws {
        server.route("/n", .headers(304, ["ETag: \"v1\""]))
        await #expect(throws: FetchError(url: url("/n"), code: .httpStatus(304))) {
            try await pipeline.image(for: url("/n"))
        }
        await #expect(throws: FetchError(url: url("/n"), code: .httpStatus(304))) {
            try await Self.transport.download(url("/n"))
        }
        #expect(!disk.containsImage(at: url("/n")))
    }

    @Test func aFreshEntryIsNotAskedForUntilItsMaxAgeHasPassed() async throws {
        server.route("/f", Self.entityTagRoute(TestImages.png(size: 2000)))
        try await loadAndKeepOnDiskOnly("/f")
        clock.advance(59)
        #expect(try await pipeline.image(for: url("/f")).source == .disk)
        #expect(pipeline.statistics.revalidation.started == 0)
        pipeline.memory.purge()
        clock.advance(2)
        #expect(try await pipeline.image(for: url("/f")).source == .disk)
        #expect(await waitUntil { pipeline.statistics.revalidation.ended == 1 })
        #expect(server.hits("/f") == 2)
    }

    @Test func a200ToARevalidationReplacesTheStoredBytes() async throws {
        let old = TestImages.png(size: 3000, seed: 1), new = TestImages.png(size: 3500, seed: 9)
        server.route("/r", Self.replacedRoute(old, by: new))
        try await loadAndKeepOnDiskOnly("/r")
        clock.advance(120)
        #expect(try await pipeline.image(for: url("/r")).bytes == old)   // shown at once, not re-delivered
        #expect(await waitUntil { pipeline.statistics.revalidation.replaced == 1 })
        await pipeline.flush()
        #expect(disk.image(for: url("/r")) == new)
        #expect(disk.freshness(of: url("/r"))?.entityTag?.opaqueTag == "\"v2\"")
    }

    /// A stale original shown from the disk by a loader, then replaced by a background
    /// revalidation answered 200: the replacement's bytes are counted by the loader's recorder
    /// (they used to go uncounted: `usage: 0 B downloaded` for a run that downloaded them).
    @Test func aReplacementDownloadedInTheBackgroundIsCountedByTheLoadersRecorder() async throws {
        let old = TestImages.png(size: 3000, seed: 1), new = TestImages.png(size: 3500, seed: 9)
        server.route("/b", Self.replacedRoute(old, by: new))
        try await loadAndKeepOnDiskOnly("/b")
        clock.advance(120)
        let recorder = DataUsageRecorder()
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(.wifi)),
                                 settings: InMemorySettingsStore(), pipeline: pipeline, usage: recorder)
        let item = ImageItem(id: "b", original: url("/b"), thumbnail: nil)
        let decision = try loader.decide(item)
        #expect(decision.rule == "original-cached")
        guard case .imageReady(_, .original, let shown) = await loader.load(item, decision: decision) else {
            Issue.record("expected the stale original")
            return
        }
        #expect(shown.bytes == old && shown.source == .disk)
        #expect(await waitUntil { pipeline.statistics.revalidation.replaced == 1 })
        await pipeline.flush()
        let downloaded = recorder.usage.amount { $0.source == .network && $0.variant == .original && $0.link.kind == .wifi }
        #expect(downloaded.bytes == new.count && downloaded.transfers == 1)
    }

    @Test func aNoStoreResponseIsDeliveredButNeverWrittenToDisk() async throws {
        let image = TestImages.png(size: 2500)
        server.route("/s", .headers(200, ["Cache-Control: no-store"], image))
        let loaded = try await pipeline.image(for: url("/s"))
        #expect(loaded.source == .network && loaded.bytes == image)
        await pipeline.flush()
        #expect(!disk.containsImage(at: url("/s")))
        #expect(disk.counters.refusedNoStore == 1)
        #expect(pipeline.statistics.diskWriteFailures == 0)
    }

    @Test func anImmutableEntryIsNeverRevalidatedWhileFresh() async throws {
        server.route("/i", Self.entityTagRoute(TestImages.png(size: 2000), cacheControl: "max-age=31536000, immutable"))
        try await loadAndKeepOnDiskOnly("/i")
        for _ in 0..<3 {
            clock.advance(30 * 86_400)
            #expect(try await pipeline.image(for: url("/i")).source == .disk)
            pipeline.memory.purge()
        }
        #expect(server.hits("/i") == 1 && pipeline.statistics.revalidation.started == 0)
    }

    @Test(arguments: [
        ("roaming", NetworkState(.cellular, isRoaming: true)),
        ("cellular expensive", NetworkState(.cellular, isExpensive: true)),
        ("offline", NetworkState.offline),
    ])
    func aStaleEntryIsShownWithoutARequest(name: String, network: NetworkState) async throws {
        server.route("/o", Self.entityTagRoute(TestImages.png(size: 2000)))
        try await loadAndKeepOnDiskOnly("/o")
        clock.advance(3600)
        let image = try await pipeline.image(for: url("/o"), networkAllowed: network.kind != .offline, network: network)
        #expect(image.source == .disk, "\(name)")
        #expect(pipeline.statistics.revalidation.started == 0, "\(name)")
        #expect(server.hits("/o") == 1, "\(name)")
    }

    @Test func aStaleEntryIsRevalidatedOnAnExpensiveLinkWhenConfigured() async throws {
        let clock = self.clock
        let eager = ImagePipeline(downloader: Self.transport, disk: disk,
                                  http: HTTPOptions(revalidatesOnExpensiveLink: true, clock: { clock.now }))
        server.route("/x", Self.entityTagRoute(TestImages.png(size: 2000)))
        _ = try await eager.image(for: url("/x"))
        await eager.flush()
        eager.memory.purge()
        clock.advance(3600)
        #expect(try await eager.image(for: url("/x"), network: NetworkState(.cellular, isExpensive: true)).source == .disk)
        #expect(await waitUntil { eager.statistics.revalidation.notModified == 1 })
    }

    @Test func aNoCacheEntryIsRevalidatedBeforeItIsShown() async throws {
        let image = TestImages.png(size: 2000, seed: 5)
        server.route("/c", Self.entityTagRoute(image, cacheControl: "no-cache"))
        try await loadAndKeepOnDiskOnly("/c")
        let shown = try await pipeline.image(for: url("/c"))
        // The 304 came before the image: nothing left in the background.
        #expect(shown.source == .disk && shown.bytes == image)
        #expect(server.hits("/c") == 2 && pipeline.statistics.revalidation.started == 0)
        #expect(server.requests("/c").last?.header("If-None-Match") == "\"v1\"")
    }

    @Test func aStaleOriginalStillCountsAsCached() async throws {
        server.route("/k", Self.entityTagRoute(TestImages.png(size: 2000)))
        try await loadAndKeepOnDiskOnly("/k")
        clock.advance(86_400)
        #expect(pipeline.containsImage(at: url("/k")))
    }

    /// A "show cached" decision (what `ImageLoader` carries out with `cachedImage(for:revalidatingOn:)`)
    /// shows the stale copy and revalidates it in the background on a free link, not on roaming;
    /// `flush()` waits for the revalidations running.
    @Test func aShowCachedDecisionRevalidatesInTheBackgroundOnAFreeLinkOnly() async throws {
        server.route("/d", Self.entityTagRoute(TestImages.png(size: 2000)))
        try await loadAndKeepOnDiskOnly("/d")
        clock.advance(3600)
        #expect(await pipeline.cachedImage(for: url("/d"), revalidatingOn: NetworkState(.cellular, isRoaming: true))?.source == .disk)
        #expect(pipeline.statistics.revalidation.started == 0)
        pipeline.memory.purge()
        #expect(await pipeline.cachedImage(for: url("/d"), revalidatingOn: NetworkState(.wifi))?.source == .disk)
        await pipeline.flush()
        #expect(pipeline.statistics.revalidation.notModified == 1 && server.hits("/d") == 2)
    }
}
