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

/// The list over the real things: the loopback HTTP server, `CurlTransport`, a temporary disk cache.
struct ImageListLoopbackTests {
    static let transport = CurlTransport(configuration: .patient)
    let server: TestHTTPServer
    let disk: TemporaryDiskCache
    let pipeline: ImagePipeline
    let reachability: FixedReachability
    let events = LockedList<RowEvent>()

    init() throws {
        server = try TestHTTPServer()
        disk = try TemporaryDiskCache()
        pipeline = ImagePipeline(downloader: Self.transport, disk: disk.cache)
        reachability = FixedReachability(NetworkState(.cellular, isExpensive: true))
    }

    /// A list on the main actor that prefetches nothing (whatever the policy's plan), so that
    /// each test knows every request it causes.
    func makeList(nearRows: Int = 0) -> ImageList {
        let loader = ImageLoader(policy: .default, reachability: reachability, settings: InMemorySettingsStore(), pipeline: pipeline)
        let events = events
        return ImageList(loader: loader, nearRows: nearRows, deliveringOn: MainActor.shared,
                         rules: ListRules(plan: { _, _ in .nothing }, letsRunningLoadsFinish: { _, _ in false })) { event in
            MainActor.assumeIsolated { events.append(event) }
        }
    }

    /// An item served at /NAME (the original, PNG seed `seed`) and /NAME-t (the thumbnail, seed + 100).
    func servedItem(_ name: String, seed: Int) -> ImageItem {
        server.route("/\(name)", .ok(TestImages.png(seed: seed)))
        server.route("/\(name)-t", .ok(TestImages.png(seed: seed + 100)))
        return ImageItem.named(name, at: server.url("/"))
    }

    func got(_ row: Int, _ summary: String, bytes: [UInt8]) -> Bool {
        events.values.contains { event in
            guard event.row == row, event.summary == summary else { return false }
            switch event {
            case .imageReady(_, _, _, _, let image), .upgraded(_, _, _, _, let image): return image.bytes == bytes
            default: return false
            }
        }
    }

    /// Cellular then Wi-Fi: thumbnails, then each visible row upgraded to its original, each
    /// fetched once.
    @Test
    func cellularToWiFiUpgradesOverHTTP() async {
        let items = (0..<4).map { servedItem("up\($0)", seed: $0) }
        let list = makeList()
        list.setItems(items)
        list.setVisibleRows(0..<3)
        list.start()
        #expect(await waitUntil { (0..<3).allSatisfy { got($0, "imageReady thumbnail", bytes: TestImages.png(seed: $0 + 100)) } })
        // The list starts its loads before the call that changed it returns: three thumbnail loads,
        // all delivered, so no request for an original is on its way (not only "not there yet").
        #expect(list.statistics.loadsStarted == 3)
        #expect(server.hits("/up0") == 0)
        reachability.update(to: NetworkState(.wifi))
        #expect(await waitUntil { (0..<3).allSatisfy { got($0, "upgraded original", bytes: TestImages.png(seed: $0)) } })
        // Three more (the visible originals), all delivered: nothing for row 3 was ever started.
        #expect(list.statistics.loadsStarted == 6)
        #expect((0..<3).allSatisfy { server.hits("/up\($0)") == 1 && server.hits("/up\($0)-t") == 1 })
        #expect(server.hits("/up3") == 0 && server.hits("/up3-t") == 0)
        #expect(list.statistics.upgrades == 3)
        list.stop()
    }

    enum Reuse: String, CaseIterable { case whileTheServerHoldsIt, whileHeldByAFling }

    /// A row reused while its request waits gets the new item only; the old answer, when it
    /// comes, lands nowhere.
    @Test(arguments: Reuse.allCases)
    func reuseWhileQueuedOverHTTP(_ reuse: Reuse) async {
        reachability.update(to: NetworkState(.wifi))
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/slow", gate.hold(.ok(TestImages.png(seed: 50))))
        let slow = ImageItem(id: "slow", original: ImageURL(server.url("/slow"))!)
        let fast = servedItem("fast", seed: 51)
        let list = makeList()
        list.setItems([slow, servedItem("other", seed: 52)])
        if reuse == .whileHeldByAFling { list.setScrollPhase(.flinging) }
        list.setVisibleRows(0..<2)
        if reuse == .whileTheServerHoldsIt {
            #expect(await waitUntil { server.hits("/slow") == 1 })
        } else {
            #expect(await waitUntil { events.values.filter { $0.summary == "placeholder" }.count == 2 })
        }
        list.setItems([fast, servedItem("other", seed: 52)])
        list.setScrollPhase(.idle)
        #expect(await waitUntil { got(0, "imageReady original", bytes: TestImages.png(seed: 51)) })
        gate.open()
        #expect(await waitUntil { pipeline.statistics.isIdle && got(1, "imageReady original", bytes: TestImages.png(seed: 52)) })
        #expect(events.values.filter { $0.row == 0 }.allSatisfy { $0.item == fast || $0.summary == "placeholder" })
        #expect(server.hits("/slow") == (reuse == .whileTheServerHoldsIt ? 1 : 0))
        // `staleDropped` is not checked: a placeholder for the new item may be overtaken on the
        // delivery actor by the load that replaced it when scrolling settled (a drop the list is
        // right to make, counted or not depending on timing). What matters is checked above:
        // nothing of the old item reached row 0.
        list.stop()
    }

    /// Offline in the middle of a download over HTTP: the transfer stops at once, the cached
    /// thumbnail stays.
    @Test func offlineInTheMiddleOfADownloadOverHTTP() async throws {
        reachability.update(to: NetworkState(.wifi))
        let gate = ServerGate()
        defer { gate.open() }
        server.route("/held", gate.hold(.ok(TestImages.png(seed: 60))))
        server.route("/held-t", .ok(TestImages.png(seed: 61)))
        let held = ImageItem(id: "held", original: ImageURL(server.url("/held"))!, thumbnail: ImageURL(server.url("/held-t")))
        _ = try await pipeline.image(for: held.thumbnail!)
        let list = makeList()
        list.setItems([held])
        list.setVisibleRows(0..<1)
        #expect(await waitUntil { server.hits("/held") == 1 && got(0, "imageReady thumbnail", bytes: TestImages.png(seed: 61)) })
        list.networkChanged(to: .offline)
        #expect(await waitUntil { pipeline.statistics.isIdle })
        #expect(events.values.map(\.summary) == ["imageReady thumbnail"])
        list.stop()
    }
}
