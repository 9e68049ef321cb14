import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import Policy
import Testing
import TestSupport

struct ImageSlotTests {
    static let transport = CurlTransport(configuration: .patient)
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

    @Test func aSlowLoadNeverLandsInAReusedSlot() async throws {
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/slow", gate.hold(.ok(TestImages.png(seed: 1))))
        server.route("/fast", .ok(TestImages.png(seed: 2)))
        _ = try await pipeline.image(for: ImageURL(server.url("/fast"))!)   // cached
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        let slow = slot.load(ImageItem.named("slow", at: server.url("/")))
        #expect(await waitUntil { server.hits("/slow") == 1 })
        let fast = slot.load(ImageItem.named("fast", at: server.url("/")))       // a cache hit: still cancels the slow load first
        await fast.value
        gate.open()                              // the slow answer may come now: it must not land
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
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/slow2", gate.hold(.ok(TestImages.png())))
        let log = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader) { log.append($0) }
        let slow = slot.load(ImageItem.named("slow2", at: server.url("/")))
        #expect(await waitUntil { server.hits("/slow2") == 1 })
        reachability.update(to: .offline)
        await slot.load(ImageItem.named("nothing-cached", at: server.url("/"))).value
        gate.open()
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
        await slot.load(ImageItem.named("broken", at: server.url("/"))).value
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
        await slot.load(ImageItem.named("cell", at: server.url("/"))).value
        guard case .imageReady(_, .thumbnail, let image)? = log.values.first else {
            Issue.record("expected the thumbnail, got \(log.values)")
            return
        }
        #expect(image.source == .network)
        #expect(server.hits("/cell") == 0)
    }

    // MARK: - Delivery contract

    static func doubleLoader(_ downloader: any ImageDownloading) -> ImageLoader {
        ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(.wifi)), settings: InMemorySettingsStore(),
                    pipeline: ImagePipeline(downloader: downloader, disk: nil))
    }

    /// The URL an event shows or failed to show (nil for the placeholder).
    static func url(of event: SlotEvent) -> ImageURL? {
        switch event {
        case .imageReady(_, _, let image): return image.url
        case .failed(let decision, _, _), .placeholder(let decision): return decision.url
        case .decisionFailed: return nil
        }
    }

    /// (On Linux, once an async `main` runs, the main actor's jobs may run on a thread other than
    /// the process's first one; the actor is what counts.)
    @MainActor
    @Test func eventsAreDeliveredOnTheMainActor() async {
        var shown: [ImageURL?] = []                       // main-actor state, touched by the handler
        let slot = ImageSlot(loader: Self.doubleLoader(ScriptedDownloader.instant)) { event in
            MainActor.assertIsolated()
            shown.append(Self.url(of: event))
        }
        await slot.load(ImageItem(id: "m", original: doubleURL("main"), thumbnail: nil)).value
        #expect(shown == [doubleURL("main")])
    }

    actor Screen {
        var shown: [ImageURL?] = []
        func record(_ url: ImageURL?) { shown.append(url) }
    }

    @Test func eventsCanBeDeliveredOnAnActorTheAppChooses() async {
        let screen = Screen()
        let slot = ImageSlot(loader: Self.doubleLoader(ScriptedDownloader.instant), deliveringOn: screen) { event in
            screen.assumeIsolated { $0.record(Self.url(of: event)) }
        }
        await slot.load(ImageItem(id: "s", original: doubleURL("screen"), thumbnail: nil)).value
        #expect(await screen.shown == [doubleURL("screen")])
    }

    /// The handler calls `load` and then `cancel` on its own slot: no deadlock, and what it
    /// cancelled is not delivered.
    @MainActor
    @Test func theHandlerMayCallBackIntoTheSlot() async {
        let gate = ScriptedDownloader.Gate()
        let gated = ScriptedDownloader(heldBy: gate) { .bytes(body(of: $0.url)) }
        let first = ImageItem(id: "1", original: doubleURL("first"), thumbnail: nil)
        let second = ImageItem(id: "2", original: doubleURL("second"), thumbnail: nil)
        let third = ImageItem(id: "3", original: doubleURL("third"), thumbnail: nil)
        var seen: [ImageURL?] = []
        var tasks: [Task<Void, Never>] = []
        let box = SlotBox()
        let slot = ImageSlot(loader: Self.doubleLoader(gated)) { event in
            let url = Self.url(of: event)
            seen.append(url)
            if url == first.original {
                tasks.append(box.slot!.load(second))       // reuse from inside the handler
            } else if url == second.original {
                tasks.append(box.slot!.load(third))
                box.slot!.cancel()                         // and cancel from inside it
            }
        }
        box.slot = slot
        gate.open()
        await slot.load(first).value
        while let task = tasks.popLast() { await task.value }
        #expect(seen == [first.original, second.original])
        box.slot = nil
    }

    /// Lets a handler reach its own slot.
    @MainActor
    final class SlotBox {
        var slot: ImageSlot?
    }

    /// Thousands of reuse cycles on the main actor (load, sometimes cancel, random latencies):
    /// every event delivered belongs to the slot's current load at that moment. Zero stale.
    @MainActor
    @Test func thousandsOfReuseCyclesDeliverNothingStale() async {
        var random = SeededGenerator(seed: 0x510_7C1C, label: "slot reuse cycles")
        let downloader = ScriptedDownloader(latency: .random(upTo: .milliseconds(2), seed: random.next())) { .bytes(body(of: $0.url)) }
        var current: ImageURL?
        var stale: [String] = []
        var delivered = 0
        let slot = ImageSlot(loader: Self.doubleLoader(downloader)) { event in
            delivered += 1
            let url = Self.url(of: event)
            if url == nil || url != current { stale.append("\(String(describing: url)) while showing \(String(describing: current))") }
        }
        var last: Task<Void, Never>?
        for cycle in 0..<3000 {
            let item = ImageItem(id: "\(cycle)", original: doubleURL("cell-\(cycle % 97)"), thumbnail: nil)
            last = slot.load(item)
            current = item.original
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                slot.cancel()
                current = nil
            case 1, 2:
                await Task.yield()
            case 3:
                try? await Task.sleep(for: .microseconds(Int.random(in: 0...1500, using: &random)))
            default:
                break
            }
        }
        await last?.value
        #expect(stale.isEmpty, "\(stale.count) stale deliveries, e.g. \(stale.first ?? "")")
        #expect(delivered > 0)
    }
}
