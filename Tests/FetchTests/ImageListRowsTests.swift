import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Policy
import Testing
import TestSupport

/// `ListRows`, the list's bookkeeping, without I/O: which rows load at what priority, which
/// loads start while scrolling, and which events are delivered.
struct ImageListRowsTests {
    typealias Rows = ListRows<String>

    static func items(_ count: Int) -> [ImageItem] {
        (0..<count).map { ImageItem.named("\($0)", suffix: ".jpg") }
    }

    /// Facts for every row of the window, decided by the default policy with `cached` in the caches.
    static func facts(_ rows: Rows, plan: PrefetchPlan, cached: Set<ImageURL> = []) -> [Rows.Facts] {
        let cache = StaticCacheContents(urls: cached)
        return rows.window(plan: plan).map { row, priority in
            let item = rows.items[row]
            let decision = ImagePolicy.default.decide(item, network: rows.network, settings: ImagePolicy.default.defaultSettings,
                                                      cache: cache)
            return Rows.Facts(row: row, item: item, priority: priority, decision: .success(decision),
                              variantCached: decision.url.map(cached.contains) ?? false,
                              thumbnailCached: item.thumbnail.map(cached.contains) ?? false)
        }
    }

    struct WindowCase: Sendable, CustomStringConvertible {
        var visible: Range<Int>
        var nearRows: Int
        var plan: PrefetchPlan
        var expected: [String]
        var description: String { "\(visible) near \(nearRows) \(plan)" }
    }

    static let windowCases = [
        WindowCase(visible: 0..<2, nearRows: 1, plan: .nothing, expected: ["0 visible#0", "1 visible#1", "2 near#0"]),
        WindowCase(visible: 5..<7, nearRows: 1, plan: PrefetchPlan(ahead: 3, behind: 2),
                   expected: ["5 visible#0", "6 visible#1", "7 near#0", "4 near#0", "3 prefetch#1", "8 prefetch#1", "9 prefetch#2"]),
        WindowCase(visible: 8..<10, nearRows: 2, plan: PrefetchPlan(ahead: 5),
                   expected: ["8 visible#0", "9 visible#1", "7 near#0", "6 near#1"]),   // the list ends at row 9
        WindowCase(visible: 3..<40, nearRows: 1, plan: .nothing,
                   expected: (3..<10).map { "\($0) visible#\($0 - 3)" } + ["2 near#0"]),      // clamped to the items
        WindowCase(visible: 0..<0, nearRows: 3, plan: PrefetchPlan(ahead: 5), expected: []),  // nothing on screen yet
    ]

    /// Visible rows in screen order, then near rows by distance, then the plan's rows.
    @Test(arguments: windowCases)
    func theWindowOrdersRowsByUrgency(_ scenario: WindowCase) {
        var rows = Rows(nearRows: scenario.nearRows, network: NetworkState(.wifi))
        _ = rows.setItems(Self.items(10))
        rows.visible = scenario.visible
        let window = rows.window(plan: scenario.plan).map { "\($0.row) \($0.priority)" }
        #expect(window.sorted() == scenario.expected.sorted())
        let visibleCount = scenario.visible.clamped(to: 0..<10).count
        #expect(window.prefix(visibleCount).allSatisfy { $0.contains("visible") })
        #expect(window.dropFirst(visibleCount).allSatisfy { !$0.contains("visible") })
    }

    /// Which downloads start in each scroll phase; the cached row (2) loads in every phase.
    @Test(arguments: [(ScrollPhase.idle, 4, 3), (.dragging, 2, 1), (.flinging, 1, 0)])
    func downloadsStartByPhase(phase: ScrollPhase, loads: Int, downloads: Int) {
        var rows = Rows(nearRows: 1, network: NetworkState(.wifi))
        _ = rows.setItems(Self.items(10))
        rows.visible = 1..<3
        rows.phase = phase
        let cached: Set<ImageURL> = [Self.items(10)[2].original]
        let actions = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, plan: .nothing, cached: cached),
                                   context: Rows.Context(plan: .nothing, letsRunningLoadsFinish: false))
        let started = actions.start.filter { if case .load = $0.work { true } else { false } }
        #expect(started.count == loads)
        #expect(started.contains { $0.row == 2 })
        #expect(rows.statistics.networkLoadsStarted == downloads)
        #expect(rows.statistics.deferredWhileScrolling == 3 - downloads)
    }

    /// A refresh computed before a newer change is dropped: the newer one applies.
    @Test func anOlderRefreshIsDropped() {
        var rows = Rows(nearRows: 0, network: NetworkState(.wifi))
        _ = rows.setItems(Self.items(4))
        rows.visible = 0..<2
        let old = (rows.epoch, Self.facts(rows, plan: .nothing))
        rows.changed()
        let actions = rows.refresh(epoch: old.0, facts: old.1, context: Rows.Context(plan: .nothing, letsRunningLoadsFinish: false))
        #expect(actions.start.isEmpty)
    }

    enum Step: Sendable, CustomStringConvertible {
        case image(Variant), placeholder, failed(fallback: Bool)
        var delivery: Rows.Delivery {
            switch self {
            case .image(let variant): return .image(ShownQuality(variant))
            case .placeholder: return .placeholder
            case .failed(let fallback): return .failed(url: ImageURL("http://127.0.0.1:9/x.jpg")!, fallback: fallback ? ShownQuality(.thumbnail) : nil)
            }
        }
        var description: String { "\(delivery)" }
    }

    static let admissionCases: [([Step], [Rows.Admission])] = [
        // A late thumbnail never replaces a shown original.
        ([.image(.original), .image(.thumbnail)], [.deliver(upgraded: false), .worse]),
        ([.image(.thumbnail), .image(.original)], [.deliver(upgraded: false), .deliver(upgraded: true)]),
        ([.placeholder, .image(.thumbnail), .image(.original)], [.deliver(upgraded: false), .deliver(upgraded: false), .deliver(upgraded: true)]),
        ([.image(.thumbnail), .placeholder], [.deliver(upgraded: false), .worse]),
        ([.image(.thumbnail), .failed(fallback: false)], [.deliver(upgraded: false), .worse]),
        ([.failed(fallback: true), .image(.thumbnail), .image(.original)], [.deliver(upgraded: false), .worse, .deliver(upgraded: true)]),
        ([.image(.original), .image(.original)], [.deliver(upgraded: false), .worse]),
    ]

    /// What a row shows only gets better: worse or equal images are dropped, better ones upgrade.
    @Test(arguments: admissionCases)
    func eventsAreAdmittedByWhatTheRowShows(steps: [Step], expected: [Rows.Admission]) {
        var rows = Rows(nearRows: 0, network: NetworkState(.wifi))
        _ = rows.setItems(Self.items(1))
        rows.visible = 0..<1
        let actions = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, plan: .nothing),
                                   context: Rows.Context(plan: .nothing, letsRunningLoadsFinish: false))
        let generation = try! #require(actions.start.first).generation
        let admissions = steps.map { rows.admit($0.delivery, row: 0, generation: generation, isLast: false) }
        #expect(admissions == expected)
    }

    /// An event of a superseded load, of a row that left the near range, or after `stop()` is stale.
    @Test func supersededLoadsAreStale() {
        var rows = Rows(nearRows: 0, network: NetworkState(.wifi))
        var items = Self.items(3)
        _ = rows.setItems(items)
        rows.visible = 0..<2
        let context = Rows.Context(plan: .nothing, letsRunningLoadsFinish: false)
        let first = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, plan: .nothing), context: context)
        for start in first.start { #expect(rows.started(row: start.row, generation: start.generation, handle: "load \(start.row)") == nil) }
        items[0] = ImageItem(original: ImageURL("http://127.0.0.1:9/new.jpg")!)
        let reuse = rows.setItems(items)
        #expect(reuse.cancel == ["load 0"])
        #expect(rows.admit(.image(ShownQuality(.original)), row: 0, generation: first.start[0].generation, isLast: true) == .stale)
        rows.changed()
        rows.visible = 1..<2
        _ = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, plan: .nothing), context: context)
        #expect(rows.admit(.image(ShownQuality(.original)), row: 1, generation: first.start[1].generation, isLast: true) == .deliver(upgraded: false))
        let stop = rows.stop()
        #expect(stop.cancel.isEmpty)                           // row 1's load ended with its last event
        #expect(rows.admit(.image(ShownQuality(.original)), row: 1, generation: first.start[1].generation, isLast: true) == .stale)
        #expect(rows.statistics.staleDropped == 2)
    }
}
