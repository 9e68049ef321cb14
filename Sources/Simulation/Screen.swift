import Fetch
import Policy
import Support

/// The app's screen in a simulation: a pool of reused cells showing the visible rows, which
/// receives what a list delivers and checks each delivery as it arrives (main actor: no lock).
///
/// Checks:
/// - **wrong slot**: an image (or event) for an item other than the one the target cell or row
///   shows now; an image's bytes are checked too (the server writes its path into every body),
///   so an image that is not the item's variant counts, whatever the event says.
/// - **stale** (for lists that address rows): an event after `stop`, a load reported as
///   cancelled (a superseded load must say nothing), the placeholder over a shown image, an image
///   of a worse variant than the one shown, or an "upgrade" that is not better.
/// - **time to visible**: from the row being on screen with the list able to load it (at once
///   when it appears while idle or dragging, or during a fling that stops with it on screen, since
///   the fling's target is known when it starts; at the end of the fling when it appears during
///   one that passes over it, since nothing starts then; at the network's return when it appeared
///   offline) to its first image. Rows that leave first are counted, not timed.
/// - **upgrade latency**: from a network change to the better image, for each row on screen then
///   showing a variant the policy now decides to replace (as the list is asked to).
@MainActor
package final class Screen {
    package struct Cell {
        var row: Int?
        /// 0 nothing or the placeholder, 1 thumbnail, 2 original; for an item with a ladder (CDN
        /// mode), the width in pixels of the image shown.
        var rank = 0
        /// Whether the cell shows an image of another item (the naive list's bug).
        var showsWrongImage = false
    }

    package struct Figures: Sendable {
        package var wrongSlotDeliveries = 0
        package var staleDeliveries = 0
        var upgrades = 0
        var timeToVisible: [Double] = []
        /// The same from the moment each row appeared, whatever the gesture or the network.
        var timeToVisibleFromEntry: [Double] = []
        /// For first images from the network: time to visible minus the URL's own latency at the
        /// server (what the client side added: queueing, transfer, delivery; negative when the
        /// load had started before the row's clock).
        var beyondLatency: [Double] = []
        /// The first screen (the rows on screen when the pass starts, against a transport that has
        /// no connection yet): each row's time to its first image, in milliseconds.
        var firstScreen: [Double] = []
        /// The same rows, for images from the network: time to visible minus the URL's own latency.
        var firstScreenBeyondLatency: [Double] = []
        /// First-screen rows that left the screen before their first image.
        var firstScreenLeftWithoutImage = 0
        var upgradeLatency: [Double] = []
        /// Rows that should have been upgraded and were still on screen at the end without it.
        var notUpgraded = 0
        /// Rows that left the screen before their expected upgrade.
        var leftBeforeUpgrade = 0
        /// Visible episodes that ended without an image (the row scrolled away first).
        var leftWithoutImage = 0
        /// Events for rows not on screen (near or prefetched rows): nothing to show.
        var offscreenEvents = 0
        var failures = 0
        /// Failures for want of resources (descriptors, threads, memory) or of the local disk:
        /// the run could not do what it measures, so its figures say nothing of the SDK.
        package var resourceFailures = 0
        /// The first such failure, for the report and the command's error line.
        package var firstResourceFailure: String?
        /// Distinct rows on screen by network kind.
        var rowsShown: [String: Set<Int>] = [:]
        /// Each network change after the first: when, to what, the gesture then, and how many
        /// rows on screen were expected to be upgraded.
        var changes: [(time: Double, state: NetworkState, gesture: ScrollPlan.Gesture, expected: Int)] = []
        /// The first problems, described, for the report (up to 10).
        var problems: [String] = []
        /// CDN mode: for each time a row of a ladder item was on screen, the widest image it
        /// showed in pixels (0: none), counted when it leaves or at the end.
        var shownWidths: [Int] = []
        /// Rows that showed an image at some time.
        var rowsWithImage: Set<Int> = []
        /// CDN mode: rows on screen at the end that showed no image.
        var endedWithoutImage = 0
    }

    package let items: [ImageItem]
    package let visibleCount: Int
    private let start: ContinuousClock.Instant
    private(set) var figures = Figures()
    private var cells: [Cell]
    private var reuseQueue: [Int]
    private var cellOfRow: [Int: Int] = [:]
    private(set) var visible: Range<Int> = 0..<0
    private var gesture = ScrollPlan.Gesture.idle
    /// The rows on screen where the current fling stops.
    private var landing: Range<Int> = 0..<0
    private var network: NetworkState
    /// When each visible row's clock started; nil while it waits for a fling to end.
    private var clockStart: [Int: Double?] = [:]
    private var entryTime: [Int: Double] = [:]
    private var expectations: [Int: Double] = [:]
    /// The rows of the first screen still waiting for their first image (nil before the first scroll).
    private var firstScreenWaiting: Set<Int>?
    private var stopped = false
    /// The server's latency of a path, in milliseconds.
    private let latency: (String) -> Int
    /// The bytes the server answers for a URL of a ladder item (CDN mode), to check each image.
    private let expectedBody: (ImageURL) -> [UInt8]?

    package init(items: [ImageItem], visibleCount: Int, network: NetworkState, start: ContinuousClock.Instant,
                 latency: @escaping (String) -> Int = { _ in 0 }, expectedBody: @escaping (ImageURL) -> [UInt8]? = { _ in nil }) {
        self.latency = latency
        self.expectedBody = expectedBody
        self.items = items
        self.visibleCount = visibleCount
        self.network = network
        self.start = start
        cells = Array(repeating: Cell(), count: visibleCount)
        reuseQueue = Array((0..<visibleCount).reversed())
    }

    /// The cell showing `row`, if it is on screen.
    package func cell(ofRow row: Int) -> Int? { cellOfRow[row] }

    private var now: Double { SimulationServer.seconds(ContinuousClock.now - start) }

    /// Shows rows `first..<first + visibleCount`: rows leaving give their cells back, rows
    /// appearing take one (the last given back first, as UIKit's reuse queue does), blank.
    package func scroll(toFirst first: Int) -> Range<Int> {
        let rows = self.rows(first: first)
        for row in visible where !rows.contains(row) {
            guard let cell = cellOfRow.removeValue(forKey: row) else { continue }
            if cells[cell].rank < 1 { figures.leftWithoutImage += 1 }
            if items[row].ladder != nil { figures.shownWidths.append(cells[cell].rank) }
            if firstScreenWaiting?.remove(row) != nil { figures.firstScreenLeftWithoutImage += 1 }
            if expectations.removeValue(forKey: row) != nil { figures.leftBeforeUpgrade += 1 }
            clockStart[row] = nil
            entryTime[row] = nil
            cells[cell] = Cell()
            reuseQueue.append(cell)
        }
        for row in rows where cellOfRow[row] == nil {
            guard let cell = reuseQueue.popLast() else { continue }
            cellOfRow[row] = cell
            cells[cell] = Cell(row: row)
            let waitsForFling = gesture == .flinging && !landing.contains(row)
            clockStart[row] = waitsForFling || network.kind == .offline ? .some(nil) : .some(now)
            entryTime[row] = now
        }
        visible = rows
        if firstScreenWaiting == nil { firstScreenWaiting = Set(rows) }
        figures.rowsShown[network.kind.rawValue, default: []].formUnion(rows)
        return rows
    }

    /// The rows on screen when the first is `first`.
    package func rows(first: Int) -> Range<Int> {
        let lower = min(max(0, first), items.count)
        return lower..<min(items.count, lower + visibleCount)
    }

    /// The gesture changed: at the end of a fling, the rows waiting for it start their clocks. A
    /// fling starts with where it stops known (`landing`): the rows of `landing` appearing during
    /// it start theirs when they appear (the list may load them from the fling's start).
    package func gestureChanged(to newGesture: ScrollPlan.Gesture, landing: Range<Int>? = nil) {
        gesture = newGesture
        self.landing = newGesture == .flinging ? landing ?? 0..<0 : 0..<0
        if newGesture != .flinging { startWaitingClocks() }
    }

    /// The network changed: rows without an image start their clocks again (they could not load
    /// offline), and rows whose shown variant `decidesBetter` says the policy now replaces are
    /// expected to be upgraded from now.
    package func networkChanged(to state: NetworkState, decidesBetter: (ImageItem, _ shownRank: Int) -> Bool) {
        network = state
        let time = now
        figures.rowsShown[state.kind.rawValue, default: []].formUnion(visible)
        expectations = [:]
        for row in visible {
            guard let cell = cellOfRow[row] else { continue }
            if cells[cell].rank < 1 {
                // Offline it cannot load: its clock waits for the network to come back.
                if state.kind == .offline { clockStart[row] = .some(nil) }
            } else if decidesBetter(items[row], cells[cell].rank) {
                expectations[row] = time
            }
        }
        figures.changes.append((time, state, gesture, expectations.count))
        if state.kind != .offline && gesture != .flinging { startWaitingClocks() }
    }

    private func startWaitingClocks() {
        guard network.kind != .offline else { return }
        let time = now
        for row in visible where clockStart[row] == .some(nil) { clockStart[row] = .some(time) }
    }

    /// Nothing more may be delivered: counts the expected upgrades that did not come.
    package func stop() {
        for row in visible where items[row].ladder != nil {
            guard let cell = cellOfRow[row] else { continue }
            figures.shownWidths.append(cells[cell].rank)
            if cells[cell].rank == 0 { figures.endedWithoutImage += 1 }
        }
        stopped = true
        figures.notUpgraded += expectations.count
        expectations = [:]
    }

    /// A row's cell appeared showing `variant` (`width` pixels wide, when known), which the list
    /// delivered while the row was off screen (the app kept it, as `cellForRowAt` reads it from
    /// the app's model).
    package func showKept(_ variant: Variant, width: Int? = nil, row: Int) {
        guard !stopped, let cell = cellOfRow[row] else { return }
        show(items[row].ladder != nil ? width ?? 0 : Self.rank(variant), in: cell, row: row, networkPath: nil)
    }

    /// How good an image is: its width for an item with a ladder, else 1 for a thumbnail and 2
    /// for an original (what a cell's `rank` holds, and what the policy's better decision is
    /// compared with).
    package static func rank(of item: ImageItem, _ variant: Variant, at url: ImageURL) -> Int {
        item.ladder != nil ? item.width(of: url) ?? 0 : rank(variant)
    }

    private func rank(_ item: ImageItem, _ variant: Variant, _ url: ImageURL) -> Int {
        Self.rank(of: item, variant, at: url)
    }

    /// Receives and checks one delivery.
    package func deliver(_ delivery: Delivery) {
        switch delivery.target {
        case .cell(let cell): deliverToCell(cell, delivery)
        case .row(let row): deliverToRow(row, delivery)
        }
    }

    private func deliverToRow(_ row: Int, _ delivery: Delivery) {
        if stopped { return problem(stale: true, "row \(row): an event after the list was stopped") }
        guard row >= 0, row < items.count, delivery.item == items[row] else {
            return problem(stale: false, "row \(row): an event for item \(delivery.item.id ?? "?") while the row shows \(row < items.count && row >= 0 ? items[row].id ?? "?" : "nothing")")
        }
        let image: (rank: Int, upgrade: Bool)?
        switch delivery.content {
        case .placeholder:
            image = nil
        case .image(let variant, let url, let bytes), .upgrade(let variant, let url, let bytes):
            guard matches(delivery.item, variant, url, bytes) else {
                return problem(stale: false, "row \(row): image bytes of \(SimulationServer.path(in: bytes) ?? "something else") for \(url)")
            }
            let rank = rank(delivery.item, variant, url)
            if case .upgrade = delivery.content { image = (rank, true) } else { image = (rank, false) }
        case .failed(let cancelled, let error, let fallback):
            figures.failures += 1
            if let error, error.code.kind == .outOfResources || error.code.kind == .localIO {
                figures.resourceFailures += 1
                if figures.firstResourceFailure == nil { figures.firstResourceFailure = error.description }
            }
            if cancelled { return problem(stale: true, "row \(row): a cancelled load was reported") }
            guard let (variant, url, bytes) = fallback else { return }
            guard matches(delivery.item, variant, url, bytes) else {
                return problem(stale: false, "row \(row): a fallback of \(SimulationServer.path(in: bytes) ?? "something else") for \(url)")
            }
            image = (rank(delivery.item, variant, url), false)
        }
        guard let cell = cellOfRow[row] else {
            figures.offscreenEvents += 1
            return
        }
        let shown = cells[cell].rank
        guard let (rank, isUpgrade) = image else {
            if shown > 0 { problem(stale: true, "row \(row): the placeholder over a shown image") }
            return
        }
        if rank < shown || (isUpgrade && rank == shown) {
            return problem(stale: true, "row \(row): \(isUpgrade ? "an upgrade to" : "an image of") rank \(rank) over rank \(shown)")
        }
        show(rank, in: cell, row: row, networkPath: delivery.fromNetwork ? Self.path(of: delivery.content) : nil)
    }

    /// The path of `url` on the server (after `http://host:port`).
    private static func serverPath(_ url: ImageURL) -> String? {
        let bytes = Array(url.absoluteString.utf8)
        guard let scheme = bytes.firstRange(ofBytes: Array("://".utf8)),
              let slash = bytes[scheme.upperBound...].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return String(decoding: bytes[slash...], as: UTF8.self)
    }

    private func deliverToCell(_ cell: Int, _ delivery: Delivery) {
        guard cell < cells.count, case .image(let variant, let url, let bytes) = delivery.content else { return }
        guard let row = cells[cell].row, delivery.item == items[row], matches(items[row], variant, url, bytes) else {
            figures.wrongSlotDeliveries += 1
            cells[cell].showsWrongImage = true
            return
        }
        cells[cell].showsWrongImage = false
        show(rank(items[row], variant, url), in: cell, row: row,
             networkPath: delivery.fromNetwork ? SimulationServer.path(in: bytes) ?? Self.serverPath(url) : nil)
    }

    private static func path(of content: Delivery.Content) -> String? {
        switch content {
        case .image(_, let url, let bytes), .upgrade(_, let url, let bytes): return SimulationServer.path(in: bytes) ?? serverPath(url)
        case .placeholder, .failed: return nil
        }
    }

    private func show(_ rank: Int, in cell: Int, row: Int, networkPath: String?) {
        let shown = cells[cell].rank
        guard rank > shown else { return }
        cells[cell].rank = rank
        figures.rowsWithImage.insert(row)
        let time = now
        if shown == 0 {
            if let entered = entryTime[row] { figures.timeToVisibleFromEntry.append(max(0, time - entered) * 1000) }
            if case .some(.some(let started)) = clockStart[row] {
                figures.timeToVisible.append(max(0, time - started) * 1000)
                let beyond = networkPath.map { (time - started) * 1000 - Double(latency($0)) }
                if let beyond { figures.beyondLatency.append(beyond) }
                if firstScreenWaiting?.remove(row) != nil {
                    figures.firstScreen.append(max(0, time - started) * 1000)
                    if let beyond { figures.firstScreenBeyondLatency.append(beyond) }
                }
            } else {
                // It arrived before the list could have been asked (a cache hit during a fling).
                figures.timeToVisible.append(0)
                if firstScreenWaiting?.remove(row) != nil { figures.firstScreen.append(0) }
            }
        } else {
            figures.upgrades += 1
            if let changed = expectations.removeValue(forKey: row) { figures.upgradeLatency.append((time - changed) * 1000) }
        }
    }

    private func matches(_ item: ImageItem, _ variant: Variant, _ url: ImageURL, _ bytes: [UInt8]) -> Bool {
        // A ladder's image: one of the item's rungs, with exactly the bytes the server has for it.
        if item.ladder != nil { return item.width(of: url) != nil && expectedBody(url) == bytes }
        guard item.url(of: variant) == url, let path = SimulationServer.path(in: bytes) else { return false }
        return url.absoluteString.hasSuffix(path) && path.hasPrefix(variant == .original ? "/o/" : "/t/")
    }

    private func problem(stale: Bool, _ text: String) {
        if stale { figures.staleDeliveries += 1 } else { figures.wrongSlotDeliveries += 1 }
        if figures.problems.count < 10 { figures.problems.append((stale ? "stale: " : "wrong slot: ") + text) }
    }

    package static func rank(_ variant: Variant) -> Int { variant == .original ? 2 : 1 }
}
