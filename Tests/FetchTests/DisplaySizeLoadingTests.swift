import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Policy
import Testing
import TestSupport

/// A slot's or a list's display width reaches the policy through the SDK's own loaders: with the
/// bundled `thumbnail-when-enough`, Wi-Fi loads the thumbnail when it covers the display and the
/// original when it does not (the loopback server counts what was fetched).
struct DisplaySizeLoadingTests {
    static let transport = CurlTransport()
    let server: TestHTTPServer
    let disk: TemporaryDiskCache
    let pipeline: ImagePipeline
    let reachability = FixedReachability(NetworkState(.wifi))
    let policy: ImagePolicy

    init() throws {
        server = try TestHTTPServer()
        disk = try TemporaryDiskCache()
        pipeline = ImagePipeline(downloader: Self.transport, disk: disk.cache)
        policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/thumbnail-when-enough.json")
    }

    var loader: ImageLoader {
        ImageLoader(policy: policy, reachability: reachability, settings: InMemorySettingsStore(), pipeline: pipeline)
    }

    /// An item served at /NAME (PNG seed `seed`, 1000 pixels wide) and /NAME-t (seed + 100, 400 wide).
    func servedItem(_ name: String, seed: Int) -> ImageItem {
        server.route("/\(name)", .ok(TestImages.png(seed: seed)))
        server.route("/\(name)-t", .ok(TestImages.png(seed: seed + 100)))
        return ImageItem.named(name, at: server.url("/"), originalWidth: 1000, thumbnailWidth: 400)
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var displayWidth: Int?
        var variant: Variant
        var rule: String
        var testDescription: String { "display \(displayWidth.map(String.init) ?? "unknown") → \(variant)" }
    }

    static let scenarios = [
        Scenario(displayWidth: 300, variant: .thumbnail, rule: "covering-thumbnail"),
        Scenario(displayWidth: 400, variant: .thumbnail, rule: "covering-thumbnail"),
        Scenario(displayWidth: 401, variant: .original, rule: "wifi-original"),
        Scenario(displayWidth: 2000, variant: .original, rule: "wifi-original"),
        Scenario(displayWidth: nil, variant: .original, rule: "wifi-original"),
    ]

    /// On Wi-Fi a slot loads only the thumbnail when it covers the slot's width, else only the original.
    @Test(arguments: scenarios)
    func aSlotLoadsTheThumbnailOnWifiOnlyWhenItCoversTheDisplay(_ scenario: Scenario) async throws {
        let item = servedItem("s", seed: 1)
        let events = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader, deliveringOn: DeliveryActor()) { events.append($0) }
        await slot.load(item, displayWidth: scenario.displayWidth).value
        guard case .imageReady(let decision, let variant, let image)? = events.values.first else {
            Issue.record("expected an image, got \(events.values)")
            return
        }
        #expect(variant == scenario.variant)
        #expect(decision.rule == scenario.rule)
        let isTheVariantsFile = image.bytes == TestImages.png(seed: scenario.variant == .thumbnail ? 101 : 1)
        #expect(isTheVariantsFile)
        #expect(server.hits("/s-t") == (scenario.variant == .thumbnail ? 1 : 0))
        #expect(server.hits("/s") == (scenario.variant == .original ? 1 : 0))
        #expect(slot.displayWidth == scenario.displayWidth)
    }

    /// `displayWidth` set once serves every later `load(_:)` and `load(_:decision:)` re-decision.
    @Test func aSlotKeepsItsDisplayWidthForLaterLoads() async throws {
        let events = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader, deliveringOn: DeliveryActor()) { events.append($0) }
        slot.displayWidth = 320
        await slot.load(servedItem("a", seed: 2)).value
        await slot.load(servedItem("b", seed: 3)).value
        #expect(events.values.map(\.variantLoaded) == [.thumbnail, .thumbnail])
        #expect(server.hits("/a") == 0 && server.hits("/b") == 0)
        #expect(server.hits("/a-t") == 1 && server.hits("/b-t") == 1)
    }

    /// The loader's own decision takes the width; without it the bundled policy decides as the default tree.
    @Test func theLoaderDecidesWithTheDisplayWidth() throws {
        let item = servedItem("d", seed: 4)
        #expect(try loader.decide(item, displayWidth: 400).variant == .thumbnail)
        #expect(try loader.decide(item, displayWidth: 800).variant == .original)
        #expect(try loader.decide(item).variant == .original)
    }

    /// A list's rows load thumbnails that cover its display width; a wider display upgrades the
    /// visible rows to their originals, each fetched once; a narrower one again replaces nothing.
    @Test func aListLoadsCoveringThumbnailsAndUpgradesWhenTheDisplayWidens() async throws {
        let items = (0..<3).map { servedItem("row\($0)", seed: 10 + $0) }
        let events = LockedList<RowEvent>()
        let list = ImageList(loader: loader, nearRows: 0, deliveringOn: DeliveryActor(),
                             rules: ListRules(plan: { _, _ in .nothing }, letsRunningLoadsFinish: { _, _ in false })) {
            events.append($0)
        }
        defer { list.stop() }
        list.setDisplayWidth(360)
        #expect(list.displayWidth == 360)
        list.setItems(items)
        list.setVisibleRows(0..<2)
        #expect(await waitUntil { events.values.filter { $0.summary == "imageReady thumbnail" }.count == 2 })
        // A list starts its loads before the call that changed it returns: two (the thumbnails),
        // both delivered, so no request for an original is on its way (not only "not there yet").
        #expect(list.statistics.loadsStarted == 2)
        #expect((0..<2).allSatisfy { server.hits("/row\($0)-t") == 1 && server.hits("/row\($0)") == 0 })
        list.setDisplayWidth(1000)
        #expect(await waitUntil { events.values.filter { $0.summary == "upgraded original" }.count == 2 })
        #expect(list.statistics.loadsStarted == 4)   // the two originals, delivered: nothing for row 2
        #expect((0..<2).allSatisfy { server.hits("/row\($0)") == 1 && server.hits("/row\($0)-t") == 1 })
        #expect(server.hits("/row2") == 0 && server.hits("/row2-t") == 0)
        let delivered = events.values.count
        list.setDisplayWidth(200)   // the originals shown are better than the thumbnails now decided
        list.setDisplayWidth(200)
        #expect(list.statistics.loadsStarted == 4)
        #expect(events.values.count == delivered)
    }
}

/// Where the tests' events are delivered (not the main actor: nothing else competes for it).
actor DeliveryActor {}

extension SlotEvent {
    /// The variant of an image delivered, if any.
    var variantLoaded: Variant? {
        if case .imageReady(_, let variant, _) = self { return variant }
        return nil
    }
}
