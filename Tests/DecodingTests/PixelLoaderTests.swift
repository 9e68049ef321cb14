import Dispatch
import Fetch
import FetchTesting
import Support
import Policy
import Testing
import TestSupport
@testable import Decoding

/// Pixels at display size from the byte pipeline: the pixel cache by URL and size, cancellation,
/// slots that never receive a stale decode, and the display width deciding the variant.
@Suite struct PixelLoaderTests {
    /// Decodes for real, counting decodes; bytes starting with a gated prefix wait for the gate.
    final class CountingWork: Sendable {
        struct Counts { var decodes = 0; var waiting = 0 }
        let counts = Locked(Counts())
        let gate = DispatchSemaphore(value: 0)
        let gated: [UInt8]?

        init(gated: [UInt8]? = nil) { self.gated = gated }

        func queue() -> DecodingQueue {
            DecodingQueue(maximumConcurrentDecodes: 2) { bytes, size throws(DecodingError) in
                self.counts.withLock { $0.decodes += 1 }
                if let gated = self.gated, bytes == gated {
                    self.counts.withLock { $0.waiting += 1 }
                    self.gate.wait()
                }
                return try ImageDecoder().decode(bytes, to: size)
            }
        }
        var decodes: Int { counts.withLock { $0.decodes } }
    }

    static func png(_ width: Int, _ height: Int, seed: Int = 0) throws -> [UInt8] {
        Array(try PNGEncoder().encode(Samples.gradient(width: width + seed, height: height)))
    }

    static func url(_ path: String) -> ImageURL { ImageURL("http://127.0.0.1:9/\(path)")! }

    @Test func theSameURLAndSizeIsACacheHitAndAnotherSizeIsDecoded() async throws {
        let work = CountingWork()
        let pixels = PixelLoader(queue: work.queue(), cache: PixelCache())
        let fetched = FetchedImage(url: Self.url("a.png"), bytes: try Self.png(400, 200), source: .network)
        let small = TargetSize(width: 100, height: 100)
        let first = try await pixels.image(for: fetched, at: small)
        #expect((first.width, first.height) == (100, 50))
        let again = try await pixels.image(for: fetched, at: small)
        #expect(again == first)
        #expect(work.decodes == 1)
        #expect(pixels.cachedImage(for: fetched.url, at: small) == first)
        let larger = try await pixels.image(for: fetched, at: TargetSize(width: 200, height: 200))
        #expect((larger.width, larger.height) == (200, 100))
        #expect(work.decodes == 2)
        #expect(pixels.cache.count == 2)
        #expect(pixels.cachedImage(for: Self.url("other.png"), at: small) == nil)
    }

    @Test func aCancelledDecodeIsNeitherReturnedNorCached() async throws {
        let bytes = try Self.png(64, 64)
        let work = CountingWork(gated: bytes)
        let pixels = PixelLoader(queue: work.queue(), cache: PixelCache())
        let fetched = FetchedImage(url: Self.url("c.png"), bytes: bytes, source: .network)
        let task = Task { try await pixels.image(for: fetched, at: TargetSize(width: 32, height: 32)) }
        #expect(await waitUntil { work.counts.withLock { $0.waiting } == 1 })
        task.cancel()
        let error = await #expect(throws: DecodingError.self) { try await task.value }
        #expect(error?.kind == .cancelled)
        work.gate.signal()
        #expect(pixels.cache.count == 0)
    }

    // MARK: - Slots

    struct Fixture {
        let downloader = ScriptedDownloader()
        let pipeline: ImagePipeline
        let loader: ImageLoader

        init(policy: ImagePolicy = .default) {
            pipeline = ImagePipeline(downloader: downloader, disk: nil)
            loader = ImageLoader(policy: policy, reachability: FixedReachability(NetworkState(.wifi)),
                                 settings: InMemorySettingsStore(), pipeline: pipeline)
        }

        func scriptedItem(_ name: String, original: [UInt8], thumbnail: [UInt8]? = nil, widths: (Int, Int)? = nil) -> ImageItem {
            let item = ImageItem.named(name, thumbnail: thumbnail != nil, originalWidth: widths?.0, thumbnailWidth: widths?.1)
            downloader.script(item.original, .bytes(original))
            if let thumbnail, let url = item.thumbnail { downloader.script(url, .bytes(thumbnail)) }
            return item
        }
    }

    @Test func aReusedSlotNeverReceivesAStaleDecode() async throws {
        let fixture = Fixture()
        let slowBytes = try Self.png(300, 300, seed: 1)
        let work = CountingWork(gated: slowBytes)
        let pixels = PixelLoader(queue: work.queue(), cache: PixelCache())
        let events = LockedList<PixelSlotEvent>()
        let slot = PixelSlot(loader: fixture.loader, pixels: pixels, displaySize: TargetSize(width: 100, height: 100),
                             deliveringOn: Delivery()) { events.append($0) }
        let slow = slot.load(fixture.scriptedItem("slow", original: slowBytes))
        #expect(await waitUntil { work.counts.withLock { $0.waiting } == 1 })   // its decode runs
        await slot.load(fixture.scriptedItem("fast", original: try Self.png(200, 100))).value
        work.gate.signal()                 // the stale decode finishes now
        await slow.value
        #expect(events.values.count == 1)
        guard case .imageReady(_, .original, let image, .network)? = events.values.first else {
            Issue.record("expected the fast image, got \(events.values)")
            return
        }
        #expect((image.width, image.height) == (100, 50))
        #expect(pixels.cachedImage(for: Self.url("slow"), at: TargetSize(width: 100, height: 100)) == nil)
    }

    @Test func cancelWhileDecodingDeliversNothing() async throws {
        let fixture = Fixture()
        let bytes = try Self.png(120, 120, seed: 2)
        let work = CountingWork(gated: bytes)
        let events = LockedList<PixelSlotEvent>()
        let slot = PixelSlot(loader: fixture.loader, pixels: PixelLoader(queue: work.queue()),
                             displaySize: TargetSize(width: 60, height: 60), deliveringOn: Delivery()) { events.append($0) }
        let load = slot.load(fixture.scriptedItem("x", original: bytes))
        #expect(await waitUntil { work.counts.withLock { $0.waiting } == 1 })
        slot.cancel()
        work.gate.signal()
        await load.value
        #expect(events.values.isEmpty)
    }

    /// The slot's display width decides: with `thumbnail-when-enough`, a thumbnail at least as
    /// wide as the slot is the one fetched and decoded on Wi-Fi; a wider slot gets the original.
    @Test(arguments: [(300, Variant.thumbnail), (500, Variant.original)])
    func theDisplayWidthChoosesTheVariantAndTheDecodedSize(_ width: Int, _ variant: Variant) async throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/thumbnail-when-enough.json")
        let fixture = Fixture(policy: policy)
        let item = fixture.scriptedItem("p", original: try Self.png(1000, 500), thumbnail: try Self.png(400, 200), widths: (1000, 400))
        let events = LockedList<PixelSlotEvent>()
        let slot = PixelSlot(loader: fixture.loader, pixels: PixelLoader(), displaySize: TargetSize(width: width, height: width),
                             deliveringOn: Delivery()) { events.append($0) }
        await slot.load(item).value
        guard case .imageReady(_, let shown, let image, _)? = events.values.first else {
            Issue.record("expected an image, got \(events.values)")
            return
        }
        #expect(shown == variant)
        #expect(image.width == (variant == .thumbnail ? min(width, 400) : width))
        #expect(fixture.downloader.calls(to: Self.url("p-t")) == (variant == .thumbnail ? 1 : 0))
        #expect(fixture.downloader.calls(to: Self.url("p")) == (variant == .original ? 1 : 0))
    }

    @Test func bytesThatDoNotDecodeAreReportedWithTheURL() async throws {
        let fixture = Fixture()
        let events = LockedList<PixelSlotEvent>()
        let slot = PixelSlot(loader: fixture.loader, pixels: PixelLoader(), displaySize: TargetSize(width: 10, height: 10),
                             deliveringOn: Delivery()) { events.append($0) }
        await slot.load(fixture.scriptedItem("bad", original: Array("not an image".utf8))).value
        guard case .decodingFailed(_, .original, let url, let error)? = events.values.first else {
            Issue.record("expected a decoding failure, got \(events.values)")
            return
        }
        #expect(url == Self.url("bad"))
        #expect(error.kind == .unsupportedFormat)
    }
}

/// Cached bytes that do not decode (issue 16 item 4): removed and counted, fetched again where
/// the network allows, a miss offline; bytes from the network that do not decode are removed too,
/// and not fetched again in a loop.
@Suite struct UndecodableEntryTests {
    let disk: TemporaryDiskCache
    let downloader = ScriptedDownloader()
    let pipeline: ImagePipeline
    /// A whole PNG container whose pixels cannot be decoded (no header chunk): what a body cut
    /// short by a lying server looked like to the fetcher before it checked structures.
    static let damaged = TestImages.png(size: 4_000, seed: 9)

    init() throws {
        disk = try TemporaryDiskCache()
        pipeline = ImagePipeline(downloader: downloader, disk: disk.cache)
    }

    func slot(on network: NetworkState, events: LockedList<PixelSlotEvent>) -> PixelSlot {
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(network), settings: InMemorySettingsStore(),
                                 pipeline: pipeline)
        return PixelSlot(loader: loader, pixels: PixelLoader(), displaySize: TargetSize(width: 50, height: 50),
                         deliveringOn: Delivery()) { events.append($0) }
    }

    @Test func aCachedOriginalThatDoesNotDecodeIsRemovedAndFetchedAgain() async throws {
        let url = PixelLoaderTests.url("o"), good = try PixelLoaderTests.png(100, 100)
        try disk.cache.store(Self.damaged, for: url)
        downloader.script(url, .bytes(good))
        let events = LockedList<PixelSlotEvent>()
        await slot(on: NetworkState(.wifi), events: events).load(ImageItem(id: "o", original: url)).value
        guard case .imageReady(_, .original, let image, .network)? = events.values.first, events.values.count == 1 else {
            Issue.record("expected the original fetched again, got \(events.values)")
            return
        }
        #expect(image.width == 50 && pipeline.statistics.undecodableDiscarded == 1 && downloader.calls(to: url) == 1)
        await pipeline.flush()
        #expect(disk.cache.image(for: url) == good)
    }

    @Test func offlineACachedOriginalThatDoesNotDecodeIsAMissAndTheCachedThumbnailIsShown() async throws {
        let original = PixelLoaderTests.url("p"), thumbnail = PixelLoaderTests.url("p-t")
        try disk.cache.store(Self.damaged, for: original)
        try disk.cache.store(try PixelLoaderTests.png(40, 40), for: thumbnail)
        let events = LockedList<PixelSlotEvent>()
        await slot(on: NetworkState(.offline), events: events).load(ImageItem(id: "p", original: original, thumbnail: thumbnail)).value
        guard case .imageReady(let decision, .thumbnail, _, .disk)? = events.values.first, events.values.count == 1 else {
            Issue.record("expected the cached thumbnail, got \(events.values)")
            return
        }
        #expect(decision.rule == "offline-cached-thumbnail")
        #expect(disk.cache.image(for: original) == nil && downloader.requests.isEmpty && pipeline.statistics.undecodableDiscarded == 1)
    }

    @Test func offlineWithNothingElseCachedItIsThePlaceholder() async throws {
        let url = PixelLoaderTests.url("q")
        try disk.cache.store(Self.damaged, for: url)
        let events = LockedList<PixelSlotEvent>()
        await slot(on: NetworkState(.offline), events: events).load(ImageItem(id: "q", original: url)).value
        guard case .placeholder? = events.values.first, events.values.count == 1 else {
            Issue.record("expected the placeholder, got \(events.values)")
            return
        }
        #expect(!pipeline.containsImage(at: url))
    }

    @Test func bytesFromTheNetworkThatDoNotDecodeAreRemovedAndNotFetchedAgainAtOnce() async throws {
        let url = PixelLoaderTests.url("r")
        downloader.script(url, .bytes(Self.damaged))
        let events = LockedList<PixelSlotEvent>()
        await slot(on: NetworkState(.wifi), events: events).load(ImageItem(id: "r", original: url)).value
        guard case .decodingFailed(_, .original, url, let error)? = events.values.first, events.values.count == 1 else {
            Issue.record("expected a decoding failure, got \(events.values)")
            return
        }
        #expect(error.kind == .corrupt && downloader.calls(to: url) == 1)
        await pipeline.flush()
        #expect(!pipeline.containsImage(at: url) && disk.cache.image(for: url) == nil)
    }
}

/// Where the slots' events are delivered in these tests.
actor Delivery {}
