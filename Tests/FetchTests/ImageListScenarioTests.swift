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

/// `ImageList` scenarios over a scripted downloader and a manual clock: no sleeps, no network.
struct ImageListScenarioTests {
    static let cellular = NetworkState(.cellular, isExpensive: true)
    static let wifi = NetworkState(.wifi)

    // MARK: - Scrolling

    /// While flinging nothing downloads (cache hits are delivered at once); on idle the visible and
    /// near rows load, at their priorities, and the rows flung past are never fetched.
    @Test(arguments: [(wifi, Variant.original), (cellular, Variant.thumbnail)])
    func flingThenSettle(network: NetworkState, variant: Variant) async {
        let h = ListHarness(network: network, nearRows: 2)
        h.pipeline.memory.store(ListHarness.bytes(h.url(22, variant)), for: h.url(22, variant))
        h.pipeline.memory.store(ListHarness.bytes(h.thumbnail(23)), for: h.thumbnail(23))
        h.list.setItems(h.items)
        h.list.setScrollPhase(.flinging)
        h.list.setVisibleRows(10..<15)
        h.list.setVisibleRows(20..<25)
        #expect(await waitUntil { h.rows([22], got: "imageReady \(variant)") })
        #expect(await waitUntil { h.rows([23], got: "imageReady thumbnail") })      // never blank: the cached thumbnail
        #expect(await waitUntil { h.rows([20, 21, 24, 18, 19, 25, 26], got: "placeholder") })
        // The list decides and starts its loads before `setVisibleRows` returns: no load that could
        // download was started, so none can reach the downloader later (not only "none yet").
        #expect(h.list.statistics.networkLoadsStarted == 0)
        #expect(h.scripted.callCount == 0)
        #expect(h.list.statistics.deferredWhileScrolling > 0)

        h.list.setScrollPhase(.idle)
        let loading = variant == .original ? [18, 19, 20, 21, 23, 24, 25, 26] : [18, 19, 20, 21, 24, 25, 26]
        let expected = Set(loading.map { h.url($0, variant) })
        #expect(await waitUntil { Set(h.scripted.requests) == expected })
        #expect(h.scripted.callCount == expected.count)
        #expect(h.downloader.priority(of: h.url(20, variant)) == LoadPriority(.visible, order: 0))
        #expect(h.downloader.priority(of: h.url(24, variant)) == LoadPriority(.visible, order: 4))
        #expect(h.downloader.priority(of: h.url(25, variant)) == LoadPriority(.near, order: 0))
        // Every download asleep on the clock before it moves (one that fell asleep later would never wake).
        #expect(await h.waitForDownloads(expected.count))
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows([20, 21, 24], got: "imageReady \(variant)") })
        if variant == .original { #expect(await waitUntil { h.rows([23], got: "upgraded original") }) }
        #expect(h.events.values.allSatisfy { !(10..<15).contains($0.row) || $0.summary == "placeholder" })
    }

    /// While dragging, visible rows download and near rows wait for the scrolling to end.
    @Test func draggingLoadsVisibleRowsOnly() async {
        let h = ListHarness(network: Self.wifi, nearRows: 2)
        h.list.setItems(h.items)
        h.list.setScrollPhase(.dragging)
        h.list.setVisibleRows(5..<8)
        let visible = Set((5..<8).map(h.original))
        #expect(await waitUntil { Set(h.scripted.requests) == visible })
        #expect(await waitUntil { h.rows([3, 4, 8, 9], got: "placeholder") })
        h.list.setScrollPhase(.idle)
        #expect(await waitUntil { Set(h.scripted.requests) == visible.union([3, 4, 8, 9].map(h.original)) })
    }

    enum Reuse: String, CaseIterable { case whileDownloading, whileHeldByAFling }

    /// A row whose item changes while its load waits gets the new item only: the old load is
    /// cancelled (in flight) or never started (held while flinging).
    @Test(arguments: Reuse.allCases)
    func reuseWhileQueued(_ reuse: Reuse) async {
        let h = ListHarness(network: Self.wifi, nearRows: 0)
        let newItem = ImageItem.named("100", suffix: ".jpg")
        h.scripted.script(newItem.original, .bytes(ListHarness.bytes(newItem.original)), after: .seconds(2))
        h.list.setItems(h.items)
        if reuse == .whileHeldByAFling { h.list.setScrollPhase(.flinging) }
        h.list.setVisibleRows(0..<3)
        if reuse == .whileDownloading {
            #expect(await h.waitForDownloads(3))
        } else {
            #expect(await waitUntil { h.rows(0..<3, got: "placeholder") })
        }
        var items = h.items
        items[1] = newItem
        h.list.setItems(items)
        h.list.setScrollPhase(.idle)
        #expect(await waitUntil { h.scripted.calls(to: newItem.original) == 1 })
        #expect(await h.waitForDownloads(3))
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.events(row: 1).contains { $0.summary == "imageReady original" && $0.item == newItem } })
        #expect(await waitUntil { h.rows([0, 2], got: "imageReady original") })
        #expect(h.events(row: 1).allSatisfy { $0.item == newItem || $0.summary == "placeholder" })
        #expect(h.scripted.calls(to: h.original(1)) == (reuse == .whileDownloading ? 1 : 0))
        if reuse == .whileDownloading { #expect(h.list.statistics.loadsCancelled == 1) }
    }

    // MARK: - Network and settings changes

    enum Trigger: String, CaseIterable { case byHand, followed }

    /// Cellular then Wi-Fi: the thumbnails stay until the originals have arrived, then upgrade.
    @Test(arguments: Trigger.allCases)
    func cellularToWiFiUpgrades(_ trigger: Trigger) async {
        let h = ListHarness(network: Self.cellular, nearRows: 1)
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<3)
        if trigger == .followed { h.list.start() }
        #expect(await h.waitForDownloads(4))
        h.clock.advance(by: .seconds(1))
        #expect(await waitUntil { h.rows(0..<4, got: "imageReady thumbnail") })
        if trigger == .byHand { h.list.networkChanged(to: Self.wifi) } else { h.reachability.update(to: Self.wifi) }
        #expect(await waitUntil { (0..<4).allSatisfy { h.scripted.calls(to: h.original($0)) == 1 } })
        #expect(await h.waitForDownloads(4))
        #expect(h.events.values.count == 4)                     // the thumbnails stay meanwhile
        #expect((0..<4).allSatisfy { h.list.shownVariant(row: $0) == .thumbnail })
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows(0..<4, got: "upgraded original") })
        #expect(h.list.statistics.upgrades == 4)
        #expect(h.events.values.count == 8)
        h.list.stop()
    }

    /// The setting `alwaysDownloadOriginalImage` turned on upgrades the shown thumbnails.
    @Test(arguments: Trigger.allCases)
    func settingTurnedOnUpgrades(_ trigger: Trigger) async throws {
        let h = ListHarness(network: Self.cellular, nearRows: 0)
        let (changes, changed) = AsyncStream.makeStream(of: Void.self)
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<2)
        if trigger == .followed { h.list.start(settingsChanges: changes) }
        #expect(await h.waitForDownloads(2))
        h.clock.advance(by: .seconds(1))
        #expect(await waitUntil { h.rows(0..<2, got: "imageReady thumbnail") })
        try h.settings.set(.bool(true), forKey: ImagePolicy.alwaysDownloadOriginalImage)
        if trigger == .byHand { h.list.settingsChanged() } else { changed.yield() }
        #expect(await h.waitForDownloads(2))
        #expect(h.scripted.calls(to: h.original(0)) == 1 && h.scripted.calls(to: h.original(1)) == 1)
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows(0..<2, got: "upgraded original") })
        h.list.stop()
    }

    /// Wi-Fi to cellular while originals download: cancelled (and the thumbnails load), unless
    /// the policy lets running loads finish.
    @Test(arguments: [false, true])
    func wifiToCellularWithAnOriginalInFlight(letsRunningLoadsFinish: Bool) async {
        let h = ListHarness(network: Self.wifi, nearRows: 0, letsRunningLoadsFinish: letsRunningLoadsFinish)
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<2)
        #expect(await h.waitForDownloads(2))
        let started = h.list.statistics.networkLoadsStarted
        h.list.networkChanged(to: Self.cellular)
        if letsRunningLoadsFinish {
            #expect(h.list.statistics.loadsLetFinish == 2)
            // Decided before `networkChanged` returned: no new load, so no thumbnail download, ever.
            #expect(h.list.statistics.networkLoadsStarted == started)
            h.clock.advance(by: .seconds(2))
            #expect(await waitUntil { h.rows(0..<2, got: "imageReady original") })
            #expect(h.scripted.calls(to: h.thumbnail(0)) == 0)
        } else {
            // The originals stop at once (their loads leave the pipeline); the thumbnails load.
            #expect(await waitUntil { h.pipeline.requestPriority(of: h.original(0)) == nil && h.pipeline.requestPriority(of: h.original(1)) == nil })
            #expect(await waitUntil { h.scripted.calls(to: h.thumbnail(0)) == 1 && h.scripted.calls(to: h.thumbnail(1)) == 1 })
            #expect(await h.waitForDownloads(2))
            h.clock.advance(by: .seconds(2))
            #expect(await waitUntil { h.rows(0..<2, got: "imageReady thumbnail") })
            #expect(h.list.statistics.loadsCancelled == 2)
            #expect(h.events.values.allSatisfy { $0.summary == "imageReady thumbnail" })
        }
    }

    /// Offline in the middle of downloads: they stop at once; a row with a cached thumbnail keeps
    /// it, a row without gets the placeholder.
    @Test func offlineInTheMiddleOfADownload() async {
        let h = ListHarness(network: Self.wifi, nearRows: 0)
        h.pipeline.memory.store(ListHarness.bytes(h.thumbnail(0)), for: h.thumbnail(0))
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<2)
        #expect(await h.waitForDownloads(2))
        #expect(await waitUntil { h.rows([0], got: "imageReady thumbnail") })   // never blank meanwhile
        h.list.networkChanged(to: .offline)
        #expect(await waitUntil { h.scripted.inFlightCount == 0 && h.pipeline.statistics.isIdle })
        #expect(await waitUntil { h.rows([1], got: "placeholder") })
        #expect(h.events(row: 0).map(\.summary) == ["imageReady thumbnail"])
        #expect(h.scripted.callCount == 2)
        #expect(h.list.statistics.loadsCancelled == 2)
    }

    /// Back online after offline (or a captive portal): transfers waiting in a retry backoff are
    /// told to go now; other changes do not tell them.
    @Test func backOnlineTellsTheDownloaderOnce() async {
        let h = ListHarness(network: Self.wifi, nearRows: 0)
        h.list.setItems(h.items)
        h.list.networkChanged(to: Self.cellular)
        h.list.networkChanged(to: .offline)
        #expect(h.scripted.networkReturnCount == 0)
        h.list.networkChanged(to: Self.wifi)
        #expect(h.scripted.networkReturnCount == 1)
        h.list.networkChanged(to: NetworkState(.wifi, isCaptive: true))
        h.list.networkChanged(to: Self.wifi)
        #expect(h.scripted.networkReturnCount == 2)
    }

    // MARK: - Prefetch

    struct PrefetchCase: Sendable, CustomStringConvertible {
        var network: NetworkState
        var plan: PrefetchPlan
        var prefetched: Variant?
        var description: String { "\(network) \(plan) → \(prefetched.map(\.rawValue) ?? "nothing")" }
    }

    static let prefetchCases = [
        PrefetchCase(network: wifi, plan: PrefetchPlan(ahead: 4), prefetched: .original),
        PrefetchCase(network: NetworkState(.wired), plan: PrefetchPlan(ahead: 4, behind: 0), prefetched: .original),
        PrefetchCase(network: cellular, plan: PrefetchPlan(ahead: 4, variants: .thumbnails), prefetched: .thumbnail),
        // A plan never loads a variant the policy would not load for a visible row.
        PrefetchCase(network: cellular, plan: PrefetchPlan(ahead: 4, variants: .decided), prefetched: .thumbnail),
        PrefetchCase(network: wifi, plan: PrefetchPlan(ahead: 4, variants: .thumbnails), prefetched: nil),
        PrefetchCase(network: NetworkState(.cellular, isRoaming: true), plan: .nothing, prefetched: nil),
        PrefetchCase(network: .offline, plan: PrefetchPlan(ahead: 4), prefetched: nil),
    ]

    /// Rows beyond the near ones load what the plan allows, at prefetch priority, and are not
    /// reported.
    @Test(arguments: prefetchCases)
    func prefetchBudgetsPerNetwork(_ scenario: PrefetchCase) async {
        let h = ListHarness(network: scenario.network, nearRows: 2, plan: scenario.plan)
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<5)
        let shown: Variant? = switch scenario.network.kind {
        case .wifi, .wired: .original
        case .offline: nil
        default: .thumbnail
        }
        var expected = Set((0..<7).compactMap { row in shown.map { h.url(row, $0) } })
        if let prefetched = scenario.prefetched { expected.formUnion([7, 8].map { h.url($0, prefetched) }) }
        #expect(await waitUntil { Set(h.scripted.requests) == expected })
        #expect(await h.waitForDownloads(expected.count))
        #expect(h.list.statistics.prefetches == (scenario.prefetched == nil ? 0 : 2))
        if let prefetched = scenario.prefetched {
            #expect(h.downloader.priority(of: h.url(7, prefetched)) == LoadPriority(.prefetch, order: 2))
        }
        h.clock.advance(by: .seconds(2))
        if let shown {
            #expect(await waitUntil { h.rows(0..<7, got: "imageReady \(shown)") })
        } else {
            #expect(await waitUntil { h.rows(0..<7, got: "placeholder") })
        }
        #expect(h.events.values.allSatisfy { $0.row < 7 })
        if let prefetched = scenario.prefetched {
            #expect(await waitUntil { h.pipeline.containsImage(at: h.url(8, prefetched)) })
        }
    }

    /// After Wi-Fi comes back, prefetched thumbnails off screen stay thumbnails until their rows are near.
    @Test func prefetchedThumbnailsAreUpgradedOnlyWhenNear() async {
        let h = ListHarness(network: Self.cellular, nearRows: 1, plan: PrefetchPlan(ahead: 3, variants: .thumbnails))
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<2)
        #expect(await h.waitForDownloads(5))                  // rows 0, 1, near 2, prefetch 3, 4
        h.clock.advance(by: .seconds(1))
        #expect(await waitUntil { h.pipeline.containsImage(at: h.thumbnail(4)) && h.rows(0..<3, got: "imageReady thumbnail") })
        let started = h.list.statistics.networkLoadsStarted
        h.list.networkChanged(to: Self.wifi)
        // Three loads started (rows 0 to 2) before `networkChanged` returned, and all three reached
        // the downloader: no load for rows 3 and 4 is on its way (not only "not there yet").
        #expect(h.list.statistics.networkLoadsStarted == started + 3)
        #expect(await waitUntil { (0..<3).allSatisfy { h.scripted.calls(to: h.original($0)) == 1 } })
        #expect(h.scripted.calls(to: h.original(3)) == 0 && h.scripted.calls(to: h.original(4)) == 0)
        h.list.setVisibleRows(2..<4)                           // row 4 is near now
        #expect(await waitUntil { h.scripted.calls(to: h.original(4)) == 1 && h.scripted.calls(to: h.original(3)) == 1 })
        h.list.stop()
    }

    // MARK: - Never blank, never worse

    /// While an original downloads, the cached thumbnail is shown; the original then upgrades it.
    @Test func aCachedThumbnailIsShownWhileTheOriginalLoads() async {
        let h = ListHarness(network: Self.wifi, nearRows: 0)
        h.pipeline.memory.store(ListHarness.bytes(h.thumbnail(0)), for: h.thumbnail(0))
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<1)
        #expect(await waitUntil { h.rows([0], got: "imageReady thumbnail") })
        #expect(await h.waitForDownloads(1))
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows([0], got: "upgraded original") })
        // One load (the original's, which delivered the cached thumbnail on the way) and it has
        // ended: no thumbnail download can still come.
        #expect(h.list.statistics.loadsStarted == 1)
        #expect(h.events(row: 0).map(\.summary) == ["imageReady thumbnail", "upgraded original"])
        #expect(h.scripted.calls(to: h.thumbnail(0)) == 0)
    }

    /// Wi-Fi to cellular after the original is shown: nothing is replaced by the worse variant.
    @Test func aShownOriginalIsNeverReplacedByAWorseVariant() async {
        let h = ListHarness(network: Self.wifi, nearRows: 0)
        h.list.setItems(h.items)
        h.list.setVisibleRows(0..<1)
        #expect(await h.waitForDownloads(1))
        h.clock.advance(by: .seconds(2))
        #expect(await waitUntil { h.rows([0], got: "imageReady original") })
        h.pipeline.memory.purge()                               // not cached any more: cellular decides the thumbnail
        let started = h.list.statistics.loadsStarted
        h.list.networkChanged(to: Self.cellular)
        h.list.setVisibleRows(0..<2)
        // One load started (row 1's) before these calls returned, and it reached the downloader:
        // nothing for row 0 is on its way, neither a download nor an event.
        #expect(h.list.statistics.loadsStarted == started + 1)
        #expect(await waitUntil { h.scripted.calls(to: h.thumbnail(1)) == 1 })
        #expect(h.scripted.calls(to: h.thumbnail(0)) == 0)
        #expect(h.events(row: 0).map(\.summary) == ["imageReady original"])
    }

    /// A row reused while its request waits in the downloader's queue: the request leaves the
    /// queue without ever starting, and the new item's request starts instead.
    @Test func reuseWhileQueuedInTheDownloader() async throws {
        let (downloader, gate, list, events, blocking, blocker) = await Self.queuedList(plan: .nothing)
        let items = (0..<4).map { ImageItem.named("\($0)", suffix: ".jpg") }
        list.setItems(items)
        list.setVisibleRows(0..<2)
        #expect(await waitUntil { downloader.queuedCount == 2 })
        let newItem = ImageItem.named("100", suffix: ".jpg")
        list.setItems([items[0], newItem] + items[2...])
        #expect(await waitUntil { !downloader.queuedURLs.contains(items[1].original) && downloader.queuedCount == 2 })
        #expect(downloader.priority(of: newItem.original) == LoadPriority(.visible, order: 1))
        gate.letThrough(blocker)
        _ = try await blocking.value
        #expect(await waitUntil { downloader.startedURLs.count == 2 })
        gate.letThrough(items[0].original)
        #expect(await waitUntil { downloader.startedURLs.count == 3 })
        gate.letThrough(newItem.original)
        #expect(await waitUntil { events.values.filter { $0.summary == "imageReady original" }.count == 2 })
        #expect(downloader.startedURLs == [blocker, items[0].original, newItem.original])
        // The old item's load was cancelled (a cancelled load delivers nothing) and no request
        // waits any more: no event of the old item can still come.
        #expect(list.statistics.loadsCancelled == 1 && downloader.queuedCount == 0)
        #expect(events.values.allSatisfy { $0.row == 0 || $0.item == newItem })
        list.stop()
    }

    /// A list over a one-at-a-time downloader on Wi-Fi whose one transfer is taken by a blocker:
    /// every request of the list waits in the downloader's queue until the test finishes the blocker.
    static func queuedList(plan: PrefetchPlan) async
        -> (ScriptedDownloader, ScriptedDownloader.Gate, ImageList, LockedList<RowEvent>, Task<FetchedImage, any Error>, ImageURL) {
        // One transfer at a time, started in priority order; each held until the test lets it through.
        let gate = ScriptedDownloader.Gate()
        let downloader = ScriptedDownloader(concurrentDownloads: 1, heldBy: gate) { _ in .bytes([1, 2, 3]) }
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(Self.wifi),
                                 settings: InMemorySettingsStore(), pipeline: pipeline)
        let events = LockedList<RowEvent>()
        let list = ImageList(loader: loader, nearRows: 0, deliveringOn: MainActor.shared,
                             rules: ListRules(plan: { _, _ in plan }, letsRunningLoadsFinish: { _, _ in false })) {
            events.append($0)
        }
        let blocker = ImageURL("http://127.0.0.1:9/blocker.jpg")!
        let blocking = Task { try await pipeline.image(for: blocker) }
        _ = await waitUntil { downloader.startedURLs == [blocker] }
        return (downloader, gate, list, events, blocking, blocker)
    }

    // MARK: - Priorities

    /// A queued prefetch whose row comes on screen overtakes the others: the downloader reads the
    /// changed priority when it chooses what to start.
    @Test func priorityOvertaking() async throws {
        let (downloader, gate, list, _, blocking, blocker) = await Self.queuedList(plan: PrefetchPlan(ahead: 8))
        #expect(downloader.startedURLs == [blocker])
        let items = (0..<20).map { ImageItem.named("\($0)", suffix: ".jpg") }
        list.setItems(items)
        list.setVisibleRows(0..<2)
        #expect(await waitUntil { downloader.queuedCount == 10 })
        #expect(downloader.priority(of: items[6].original) == LoadPriority(.prefetch, order: 4))
        list.setVisibleRows(6..<8)                              // rows 6 and 7 come on screen
        #expect(downloader.priority(of: items[6].original) == LoadPriority(.visible, order: 0))
        #expect(downloader.priority(of: items[7].original) == LoadPriority(.visible, order: 1))
        #expect(await waitUntil { !downloader.queuedURLs.contains(items[0].original) })   // scrolled past: cancelled
        gate.letThrough(blocker)
        _ = try await blocking.value
        #expect(await waitUntil { downloader.startedURLs.count == 2 })
        gate.letThrough(items[6].original)
        #expect(await waitUntil { downloader.startedURLs.count == 3 })
        #expect(downloader.startedURLs == [blocker, items[6].original, items[7].original])
        list.stop()
    }
}
