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

/// `ImageList` with the fling's target (`setFlingTarget(_:)`): the rows where a fling will stop
/// load during the fling, the rows passed over do not. Scripted downloader and manual clock.
struct ImageListFlingTargetTests {
    static let cellular = NetworkState(.cellular, isExpensive: true)
    static let wifi = NetworkState(.wifi)

    /// How the target is given (before the fling as UIKit does, or once it runs).
    enum Order: String, CaseIterable { case targetThenFling, flingThenTarget }

    /// During a fling with a target, the target rows download at visible priority in screen
    /// order, the rows passed over (visible during the fling) and the near rows start nothing;
    /// the cached row is delivered at once; landing there starts nothing twice.
    @Test(arguments: [(wifi, Variant.original, Order.targetThenFling), (cellular, .thumbnail, .flingThenTarget),
                      (wifi, .original, .flingThenTarget)])
    func targetRowsLoadDuringTheFling(network: NetworkState, variant: Variant, order: Order) async {
        let h = ListHarness(network: network, nearRows: 2)
        h.pipeline.memory.store(ListHarness.bytes(h.url(31, variant)), for: h.url(31, variant))
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<4)
        #expect(await h.waitForDownloads(6))                                   // 0..<4 and near 4, 5
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows(0..<4, got: "imageReady \(variant)") })
        h.list.setScrollPhase(.dragging)
        if order == .targetThenFling { h.list.setFlingTarget(30..<34) }
        h.list.setScrollPhase(.flinging)
        if order == .flingThenTarget { h.list.setFlingTarget(30..<34) }
        h.list.setVisibleRows(10..<14)                                         // passed over
        h.list.setVisibleRows(20..<24)
        let target = Set([30, 32, 33].map { h.url($0, variant) })
        #expect(await waitUntil { Set(h.scripted.requests).subtracting((0..<6).map { h.url($0, variant) }) == target })
        #expect(await waitUntil { h.rows([31], got: "imageReady \(variant)") })
        for (order, row) in [30, 31, 32, 33].enumerated() where row != 31 {
            #expect(h.downloader.priority(of: h.url(row, variant)) == LoadPriority(.visible, order: order))
        }
        #expect(await waitUntil { h.rows([20, 21, 22, 23], got: "placeholder") })
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows([30, 32, 33], got: "imageReady \(variant)") })
        // The fling lands where predicted: nothing downloads twice, the near rows load now.
        h.list.setVisibleRows(30..<34)
        h.list.setScrollPhase(.idle)
        let near = Set([28, 29, 34, 35].map { h.url($0, variant) })
        #expect(await waitUntil { Set(h.scripted.requests).isSuperset(of: near) })
        #expect(h.scripted.requests.allSatisfy { h.scripted.calls(to: $0) == 1 })
        #expect(h.scripted.requests.allSatisfy { url in !(10..<28).contains { h.url($0, variant) == url } })
        #expect(h.events.values.allSatisfy { !(10..<14).contains($0.row) || $0.summary == "placeholder" })
    }

    /// A list flinging over rows 5..<9 toward rows 20..<24 (near rows 1), whose 4 target
    /// downloads are in flight.
    static func flingingTowardRows20To24() async -> ListHarness {
        let h = ListHarness(network: wifi, nearRows: 1)
        h.list.setItems(h.items)
        h.list.setScrollPhase(.flinging)
        h.list.setFlingTarget(20..<24)
        h.list.setVisibleRows(5..<9)
        #expect(await h.waitForDownloads(4))
        return h
    }

    /// Another fling changes the target: the downloads of rows neither targeted nor visible are
    /// cancelled (nothing is delivered for them); the new target rows load.
    @Test(arguments: [0, 2])
    func aChangedTargetCancels(overlap: Int) async {
        let h = await Self.flingingTowardRows20To24()
        let second = (24 - overlap)..<(28 - overlap)
        h.list.setScrollPhase(.dragging)                                       // caught, flung again
        h.list.setFlingTarget(second)
        h.list.setScrollPhase(.flinging)
        let dropped = (20..<24).filter { !second.contains($0) }
        #expect(await waitUntil { h.list.statistics.loadsCancelled == dropped.count })
        #expect(await waitUntil { second.allSatisfy { h.scripted.calls(to: h.original($0)) == 1 } })
        #expect(await h.waitForDownloads(8))                                   // + the visible rows, during the drag
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows(second, got: "imageReady original") })
        #expect(h.events.values.allSatisfy { !dropped.contains($0.row) })
        #expect(h.scripted.requests.allSatisfy { h.scripted.calls(to: $0) == 1 })
    }

    enum Landing: String, CaseIterable { case short, beyond }

    /// The fling stops elsewhere than predicted: the usual rules apply where it stopped (each
    /// visible row gets its own item's image, one download per URL, nothing for rows left).
    @Test(arguments: Landing.allCases)
    func aWrongPredictionStillDeliversRight(_ landing: Landing) async {
        let h = await Self.flingingTowardRows20To24()
        let stopped = landing == .short ? 18..<22 : 30..<34
        h.list.setVisibleRows(stopped)
        h.list.setScrollPhase(.idle)
        let wanted = Set((stopped.lowerBound - 1..<stopped.upperBound + 1).map(h.original))
        #expect(await waitUntil { Set(h.scripted.requests).isSuperset(of: wanted) })
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows(stopped, got: "imageReady original") })
        #expect(h.scripted.requests.allSatisfy { h.scripted.calls(to: $0) == 1 })
        // Target rows the fling did not reach lost their downloads and deliver nothing.
        let missed = (20..<24).filter { !stopped.contains($0) && !wanted.contains(h.original($0)) }
        #expect(h.list.statistics.loadsCancelled == missed.count)
        #expect(h.events.values.allSatisfy { !missed.contains($0.row) })
    }
}

/// The fling's target over the loopback server, `CurlTransport` and a temporary disk cache.
struct ImageListFlingTargetLoopbackTests {
    static let transport = CurlTransport()

    /// During a fling with a target, the target rows' originals are fetched (once each) and
    /// delivered with their own bytes; the rows passed over are never requested; landing there
    /// fetches nothing again.
    @Test
    func targetRowsLoadDuringTheFlingOverHTTP() async throws {
        let server = try TestHTTPServer()
        let disk = try TemporaryDiskCache()
        let pipeline = ImagePipeline(downloader: Self.transport, disk: disk.cache)
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(.wifi)),
                                 settings: InMemorySettingsStore(), pipeline: pipeline)
        let events = LockedList<RowEvent>()
        let list = ImageList(loader: loader, nearRows: 0, deliveringOn: MainActor.shared,
                             rules: ListRules(plan: { _, _ in .nothing }, letsRunningLoadsFinish: { _, _ in false })) { event in
            events.append(event)
        }
        let items = (0..<12).map { index -> ImageItem in
            server.route("/f\(index)", .ok(TestImages.png(seed: index)))
            return ImageItem(id: "f\(index)", original: ImageURL(server.url("/f\(index)"))!)
        }
        func got(_ row: Int) -> Bool {
            events.values.contains { event in
                if case .imageReady(_, _, _, .original, let image) = event { return event.row == row && image.bytes == TestImages.png(seed: row) }
                return false
            }
        }
        list.setItems(items)
        list.setScrollPhase(.dragging)
        list.setFlingTarget(8..<11)
        list.setScrollPhase(.flinging)
        list.setVisibleRows(2..<5)                                             // passed over
        #expect(await waitUntil { (8..<11).allSatisfy(got) })
        list.setVisibleRows(8..<11)
        list.setScrollPhase(.idle)
        #expect(await waitUntil { pipeline.statistics.isIdle })
        // Loads start before the call that changed the list returns: three that could download
        // (the target's), all ended, so no request for a row passed over is on its way.
        #expect(list.statistics.networkLoadsStarted == 3)
        #expect((8..<11).allSatisfy { server.hits("/f\($0)") == 1 })
        #expect((0..<8).allSatisfy { server.hits("/f\($0)") == 0 } && server.hits("/f11") == 0)
        #expect(events.values.filter { (8..<11).contains($0.row) }.count == 3)
        list.stop()
    }
}
