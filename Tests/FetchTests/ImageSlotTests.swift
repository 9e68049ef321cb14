import Fetch
import Foundation
import Policy
import Testing
import TestSupport

struct ImageSlotTests {
    static let transport = CurlTransport()
    let server: TestHTTPServer
    let pipeline: ImagePipeline
    let reachability = FixedReachability(NetworkState(.wifi))
    let folder = TemporaryFolder()

    init() throws {
        server = try TestHTTPServer()
        pipeline = ImagePipeline(downloader: Self.transport, disk: try DiskCache(folder: folder.path))
    }

    var loader: ImageLoader {
        ImageLoader(policy: .default, reachability: reachability, settings: InMemorySettingsStore(), pipeline: pipeline)
    }

    func item(_ name: String, thumbnail: Bool = true) -> ImageItem {
        ImageItem(id: name, original: ImageURL(server.url("/\(name)"))!,
                  thumbnail: thumbnail ? ImageURL(server.url("/\(name)-t")) : nil)
    }

    @Test func aSlowLoadNeverLandsInAReusedSlot() async throws {
        server.route("/slow", .delayed(0.5, .ok(TestImages.png(seed: 1))))
        server.route("/fast", .ok(TestImages.png(seed: 2)))
        _ = try await pipeline.image(for: ImageURL(server.url("/fast"))!)   // cached
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        let slow = slot.load(item("slow"))
        #expect(await waitUntil { server.hits("/slow") == 1 })
        let fast = slot.load(item("fast"))       // a cache hit: still cancels the slow load first
        await fast.value
        await slow.value                         // the superseded load has ended: nothing more can come
        #expect(log.values.count == 1)
        guard case .imageReady(let decision, .original, let image)? = log.values.first else {
            Issue.record("expected the fast image, got \(log.values)")
            return
        }
        #expect(decision.rule == "original-cached")
        #expect(image.bytes == TestImages.png(seed: 2))
        #expect(image.source == .memory)
    }

    @Test func aPlaceholderDecisionAlsoSupersedesAPendingLoad() async throws {
        server.route("/slow2", .delayed(0.4, .ok(TestImages.png())))
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        let slow = slot.load(item("slow2"))
        #expect(await waitUntil { server.hits("/slow2") == 1 })
        reachability.update(to: .offline)
        await slot.load(item("nothing-cached")).value
        await slow.value
        guard case .placeholder(let decision)? = log.values.first, log.values.count == 1 else {
            Issue.record("expected only the placeholder, got \(log.values)")
            return
        }
        #expect(decision.rule == "offline-placeholder")
        #expect(server.hits("/nothing-cached") == 0)
    }

    @Test func aFailureFallsBackToTheCachedThumbnail() async throws {
        server.route("/broken", .status(500))
        server.route("/broken-t", .ok(TestImages.png(seed: 7)))
        _ = try await pipeline.image(for: ImageURL(server.url("/broken-t"))!)
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        await slot.load(item("broken")).value
        guard case .failed(_, let error, let fallback)? = log.values.first else {
            Issue.record("expected a failure, got \(log.values)")
            return
        }
        #expect(error.code == .httpStatus(500))
        #expect(fallback?.bytes == TestImages.png(seed: 7))
    }

    @Test func onCellularTheSlotLoadsTheThumbnail() async throws {
        server.route("/cell-t", .ok(TestImages.png(seed: 3)))
        reachability.update(to: NetworkState(.cellular))
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        await slot.load(item("cell")).value
        guard case .imageReady(_, .thumbnail, let image)? = log.values.first else {
            Issue.record("expected the thumbnail, got \(log.values)")
            return
        }
        #expect(image.source == .network)
        #expect(server.hits("/cell") == 0)
    }
}
