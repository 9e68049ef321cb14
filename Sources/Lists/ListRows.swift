import Policy
import Pipeline
import Transport
import Caching
import Accounting
import HTTPSemantics
import Support

/// An `ImageList`'s bookkeeping: the items, the visible rows, the gesture, the network state, and
/// per row what it shows and the one load it runs. A value that returns what to do (start a load,
/// cancel one, change a priority, deliver or drop an event), tested without I/O; the list keeps it
/// under its lock and carries the actions out after releasing the lock.
///
/// `Handle` is what cancels a row's load (a `Task` in the list, a name in tests).
///
/// Rules (each with a test in `ImageListRowsTests`):
/// - One load per row: a row's new load cancels its previous one, and an event is delivered only
///   when its load is still the row's current one (`admit`).
/// - A row shows a variant at a time; an image as good as or worse than the one shown is dropped
///   (a late thumbnail never replaces an original), a better one is an upgrade.
/// - Rows outside visible ∪ near ∪ the prefetch plan lose their load; a row that leaves visible ∪
///   near keeps a load only if the prefetch plan would start it (then at prefetch priority).
/// - While flinging, no download starts, except for the fling's target rows (where the app says
///   the fling will stop), which load at visible priority in screen order; while dragging, only
///   visible rows' downloads start. Cache reads start always. A download started for a target
///   row is cancelled, during the fling, when its row is neither targeted nor visible any more.
struct ListRows<Handle> {
    /// What the rows need to know about the list as a whole.
    var items: [ImageItem] = []
    var visible: Range<Int> = 0..<0
    var nearRows: Int
    var phase: ScrollPhase = .idle {
        // A rest forgets the target; a drag keeps it (given just before its fling, or a fling
        // caught and flung again, which gives a new one).
        didSet { if phase == .idle { flingTarget = nil } }
    }
    /// Where the current (or coming) fling stops, as the app reported it; applies until `.idle`.
    var flingTarget: Range<Int>?
    /// Every row's width on screen in pixels (nil: unknown), for the policy's `thumbnailCoversDisplay`.
    var displayWidth: Int?
    var network: NetworkState
    var isStopped = false
    /// Bumped by every change of the inputs: a refresh computed for an older epoch is dropped
    /// (a newer one follows).
    private(set) var epoch = 0
    private(set) var rows: [Int: Row] = [:]
    private var lastGeneration = 0
    var statistics = ImageListStatistics()

    /// One row's state.
    struct Row {
        var item: ImageItem
        /// Bumped by each new load or cancellation: only events of this generation are delivered.
        var generation = 0
        /// Visible or near at the last refresh: its events are delivered.
        var isPresented = false
        /// The best image delivered since the row was last presented.
        var shown: ShownQuality?
        /// Whether any event was delivered since the row was last presented.
        var reported = false
        /// A URL whose load failed for this row: not tried again until the row is presented
        /// anew or the network or settings change.
        var failedURL: ImageURL?
        var load: Load?
    }

    /// A row's load in flight.
    struct Load {
        var generation: Int
        /// nil for an event delivered without loading (the placeholder, a failed decision).
        var url: ImageURL?
        var quality: ShownQuality?
        /// Whether it may download (its variant was not cached when it started).
        var isNetwork: Bool
        var priority: RequestPriority
        var handle: Handle?
        /// Kept although a decision made now would not start it (the policy lets running loads finish).
        var isLetFinish = false
        /// A download started for a row of the fling's target.
        var isForTarget = false
    }

    /// What a refresh decided for one row, from outside the lock.
    struct Facts {
        var row: Int
        var item: ImageItem
        var priority: LoadPriority
        var decision: Result<Decision, DataFileError>
        /// Whether the decision's variant is in a cache.
        var variantCached: Bool
        /// Whether the item's thumbnail is in a cache.
        var thumbnailCached: Bool
    }

    /// How a refresh treats the rows.
    struct Context {
        var plan: PrefetchPlan
        /// Running downloads a new decision would not start are kept (not offline).
        var letsRunningLoadsFinish: Bool
    }

    /// What to start for a row.
    struct Start {
        enum Work {
            /// Carry out the decision (a cache read or a download), reading `fallback` (a cached
            /// thumbnail) meanwhile when nothing is shown.
            case load(Decision, fallback: ImageURL?)
            /// Read this cached thumbnail only (its download waits for the scrolling to end).
            case cachedThumbnail(Decision, ImageURL)
            /// Deliver the placeholder.
            case placeholder(Decision)
            /// Deliver the failed decision.
            case decisionFailed(DataFileError)
        }

        var row: Int
        var item: ImageItem
        var generation: Int
        var priority: RequestPriority
        var work: Work
    }

    /// What to do after a refresh or a change.
    struct Actions {
        var cancel: [Handle] = []
        var start: [Start] = []
        var reprioritize: [(RequestPriority, LoadPriority)] = []
    }

    init(nearRows: Int, network: NetworkState) {
        self.nearRows = max(0, nearRows)
        self.network = network
    }

    // MARK: - Inputs

    /// Marks a change of the inputs: refreshes computed before it are dropped.
    mutating func changed() {
        epoch += 1
    }

    /// Row i shows items[i]: rows whose item changed lose their load and what they showed.
    mutating func setItems(_ newItems: [ImageItem]) -> Actions {
        changed()
        var actions = Actions()
        for (index, row) in rows where index >= newItems.count || newItems[index] != row.item {
            cancelLoad(of: index, into: &actions)
            rows[index] = nil
        }
        items = newItems
        return actions
    }

    /// The network or the settings changed: failed URLs may be tried again.
    mutating func redecide() {
        changed()
        statistics.redecisions += 1
        for index in rows.keys { rows[index]?.failedURL = nil }
    }

    /// Cancels every load; nothing more is delivered.
    mutating func stop() -> Actions {
        changed()
        isStopped = true
        var actions = Actions()
        for index in rows.keys { cancelLoad(of: index, into: &actions) }
        rows = [:]
        return actions
    }

    // MARK: - The window

    /// The rows that may have a load, most urgent first: visible rows in screen order, then near
    /// rows by distance (below before above), then the prefetch plan's rows by distance. Empty
    /// while no row is visible.
    func window(plan: PrefetchPlan) -> [(row: Int, priority: LoadPriority)] {
        guard !isStopped, !items.isEmpty else { return [] }
        let count = items.count
        let lower = min(max(0, visible.lowerBound), count)
        let upper = min(max(lower, visible.upperBound), count)
        // Nothing on screen (the table is not laid out yet): nothing to load around.
        guard lower < upper else { return [] }
        var result: [(row: Int, priority: LoadPriority)] = []
        for row in lower..<upper { result.append((row, LoadPriority(.visible, order: row - lower))) }
        // The fling's target rows, at visible priority in their screen order (as when landed).
        let target = activeTarget
        for row in target where !(lower..<upper).contains(row) {
            result.append((row, LoadPriority(.visible, order: row - target.lowerBound)))
        }
        let reach = max(nearRows, plan.ahead, plan.behind)
        guard reach > 0 else { return result }
        var near: [(Int, LoadPriority)] = []
        var prefetch: [(Int, LoadPriority)] = []
        for distance in 1...reach {
            let below = upper - 1 + distance, above = lower - distance
            if below < count, !target.contains(below) {
                if distance <= nearRows { near.append((below, LoadPriority(.near, order: distance - 1))) }
                else if distance <= plan.ahead { prefetch.append((below, LoadPriority(.prefetch, order: distance - 1))) }
            }
            if above >= 0, !target.contains(above) {
                if distance <= nearRows { near.append((above, LoadPriority(.near, order: distance - 1))) }
                else if distance <= plan.behind { prefetch.append((above, LoadPriority(.prefetch, order: distance - 1))) }
            }
        }
        return result + near + prefetch
    }

    /// The fling target clamped to the items, while scrolling; empty at rest.
    var activeTarget: Range<Int> {
        guard phase != .idle, let target = flingTarget else { return 0..<0 }
        let lower = min(max(0, target.lowerBound), items.count)
        return lower..<min(max(lower, target.upperBound), items.count)
    }

    // MARK: - Refresh

    /// Applies a refresh computed for `epoch`: every row of the window gets what its facts call
    /// for; rows outside it lose their loads. Nothing happens for an older epoch.
    mutating func refresh(epoch: Int, facts: [Facts], context: Context) -> Actions {
        var actions = Actions()
        guard epoch == self.epoch, !isStopped else { return actions }
        let inWindow = Set(facts.map(\.row))
        for index in rows.keys where !inWindow.contains(index) {
            cancelLoad(of: index, into: &actions)
            rows[index] = nil
        }
        for fact in facts where fact.row < items.count && items[fact.row] == fact.item {
            refresh(fact, context: context, into: &actions)
        }
        return actions
    }

    private enum Want {
        case nothing
        case placeholder(Decision)
        case decisionFailed(DataFileError)
        case load(Decision, quality: ShownQuality, url: ImageURL, isNetwork: Bool)
    }

    private mutating func refresh(_ fact: Facts, context: Context, into actions: inout Actions) {
        var row = rows[fact.row] ?? Row(item: fact.item)
        let isPresented = fact.priority.tier != .prefetch
        if isPresented != row.isPresented {
            row.isPresented = isPresented
            row.shown = nil
            row.reported = false
            row.failedURL = nil
        }
        rows[fact.row] = row
        let want = self.want(for: fact, row: row, plan: context.plan)

        if let load = row.load {
            let (keep, letFinish) = keeps(load, for: want, row: row, index: fact.row, priority: fact.priority, context: context)
            if keep {
                if letFinish && !load.isLetFinish {
                    statistics.loadsLetFinish += 1
                    rows[fact.row]?.load?.isLetFinish = true
                }
                if load.priority.value != fact.priority { actions.reprioritize.append((load.priority, fact.priority)) }
                return
            }
            cancelLoad(of: fact.row, into: &actions)
        }

        switch want {
        case .nothing:
            return
        case .placeholder(let decision):
            start(.placeholder(decision), for: fact, into: &actions)
        case .decisionFailed(let error):
            start(.decisionFailed(error), for: fact, into: &actions)
        case .load(let decision, let quality, let url, let isNetwork):
            let variant = quality.variant
            if isNetwork && !mayDownload(row: fact.row, at: fact.priority) {
                statistics.deferredWhileScrolling += 1
                guard isPresented, !row.reported else { return }
                if fact.thumbnailCached, variant == .original, let thumbnail = fact.item.thumbnail {
                    start(.cachedThumbnail(decision, thumbnail), for: fact, into: &actions)
                } else {
                    start(.placeholder(decision), for: fact, into: &actions)
                }
                return
            }
            var fallback: ImageURL?
            if isNetwork, isPresented, variant == .original, row.shown == nil, fact.thumbnailCached {
                fallback = fact.item.thumbnail
            }
            start(.load(decision, fallback: fallback), for: fact, into: &actions)
            rows[fact.row]?.load?.url = url
            rows[fact.row]?.load?.quality = quality
            rows[fact.row]?.load?.isNetwork = isNetwork
            let isForTarget = isNetwork && activeTarget.contains(fact.row)
            rows[fact.row]?.load?.isForTarget = isForTarget
            statistics.loadsStarted += 1
            if isNetwork { statistics.networkLoadsStarted += 1 }
            if !isPresented { statistics.prefetches += 1 }
        }
    }

    /// What the row should load or deliver now.
    private func want(for fact: Facts, row: Row, plan: PrefetchPlan) -> Want {
        let isPresented = fact.priority.tier != .prefetch
        let decision: Decision
        switch fact.decision {
        case .failure(let error):
            return isPresented && !row.reported ? .decisionFailed(error) : .nothing
        case .success(let decided):
            decision = decided
        }
        guard let variant = decision.variant, let url = decision.url else {
            return isPresented && !row.reported ? .placeholder(decision) : .nothing
        }
        let quality = ShownQuality(variant, url: url, of: fact.item)
        // Never a narrower (or as good) image after a wider one: the row only gets better.
        if let shown = row.shown, shown.isAtLeast(quality) { return .nothing }
        if url == row.failedURL { return .nothing }
        let isNetwork = decision.action.kind == .load && !fact.variantCached && decision.network.kind != .offline
        if !isPresented {
            // Prefetch only fills the caches, with what the plan allows.
            guard isNetwork else { return .nothing }
            if plan.variants == .thumbnails && variant != .thumbnail { return .nothing }
            // A prefetched thumbnail off screen is not upgraded until its row is near.
            if variant == .original && fact.thumbnailCached { return .nothing }
        }
        return .load(decision, quality: quality, url: url, isNetwork: isNetwork)
    }

    /// Whether the running `load` goes on under `want`: `letFinish` when only because the policy
    /// lets running loads finish.
    private func keeps(_ load: Load, for want: Want, row: Row, index: Int, priority: LoadPriority,
                       context: Context) -> (keep: Bool, letFinish: Bool) {
        // A download for a target row that is neither targeted nor visible now (another fling).
        if load.isForTarget, phase != .idle, !mayDownload(row: index, at: priority) { return (false, false) }
        switch want {
        case .load(_, _, let url, let isNetwork):
            if load.url == url { return (true, false) }
            // A placeholder or cached thumbnail delivered while the download waits for the scrolling.
            if load.url == nil, isNetwork, !mayDownload(row: index, at: priority) { return (true, false) }
        case .placeholder, .decisionFailed, .nothing:
            if load.url == nil { return (true, false) }
        }
        // Running downloads that a decision made now would not start.
        guard load.isNetwork, row.isPresented, context.letsRunningLoadsFinish, network.kind != .offline else {
            return (false, false)
        }
        if case .load(_, let quality, _, _) = want, let running = load.quality, !running.isAtLeast(quality) {
            return (false, false)
        }
        return (true, true)
    }

    /// Whether a download may start now for row `index` at `priority`.
    private func mayDownload(row index: Int, at priority: LoadPriority) -> Bool {
        switch phase {
        case .idle: return true
        case .dragging: return priority.tier == .visible
        case .flinging: return activeTarget.contains(index)
        }
    }

    private mutating func start(_ work: Start.Work, for fact: Facts, into actions: inout Actions) {
        lastGeneration += 1
        let generation = lastGeneration
        let priority = RequestPriority(fact.priority)
        rows[fact.row]?.generation = generation
        rows[fact.row]?.load = Load(generation: generation, url: nil, quality: nil, isNetwork: false, priority: priority)
        actions.start.append(Start(row: fact.row, item: fact.item, generation: generation, priority: priority, work: work))
    }

    private mutating func cancelLoad(of index: Int, into actions: inout Actions) {
        guard var row = rows[index] else { return }
        lastGeneration += 1
        row.generation = lastGeneration
        if let load = row.load {
            if let handle = load.handle { actions.cancel.append(handle) }
            if load.url != nil { statistics.loadsCancelled += 1 }
            row.load = nil
        }
        rows[index] = row
    }

    // MARK: - Loads

    /// The task of a load exists: returns its handle again when it must be cancelled at once
    /// (the row moved on before it existed).
    mutating func started(row index: Int, generation: Int, handle: Handle) -> Handle? {
        guard rows[index]?.load?.generation == generation else { return handle }
        rows[index]?.load?.handle = handle
        return nil
    }

    /// What a delivered event is.
    enum Delivery {
        case image(ShownQuality)
        case placeholder
        /// A failed load, and the quality of the fallback image delivered with it, if any.
        case failed(url: ImageURL, fallback: ShownQuality?)
        case decisionFailed
    }

    /// What to do with an event.
    enum Admission: Equatable {
        /// Deliver it; `upgraded` when it replaces a worse variant shown.
        case deliver(upgraded: Bool)
        /// Drop it: the row moved on (or the list stopped).
        case stale
        /// Drop it: the row shows something as good or better.
        case worse
    }

    /// Whether an event of `generation` for `row` is delivered, and how; records what the row
    /// shows then. `isLast` ends the load (its last event).
    mutating func admit(_ delivery: Delivery, row index: Int, generation: Int, isLast: Bool) -> Admission {
        guard !isStopped, var row = rows[index], row.generation == generation else {
            statistics.staleDropped += 1
            return .stale
        }
        if isLast, row.load?.generation == generation { row.load = nil }
        defer { rows[index] = row }
        guard row.isPresented else {
            statistics.staleDropped += 1
            return .stale
        }
        let admission: Admission
        switch delivery {
        case .image(let quality):
            if let shown = row.shown, shown.isAtLeast(quality) {
                admission = .worse
            } else {
                admission = .deliver(upgraded: row.shown != nil)
                row.shown = quality
            }
        case .placeholder, .decisionFailed:
            admission = row.shown == nil ? .deliver(upgraded: false) : .worse
        case .failed(let url, let fallback):
            row.failedURL = url
            if row.shown == nil {
                admission = .deliver(upgraded: false)
                if let fallback { row.shown = fallback }
            } else {
                admission = .worse
            }
        }
        switch admission {
        case .deliver(let upgraded):
            row.reported = true
            statistics.deliveries += 1
            if upgraded { statistics.upgrades += 1 }
        case .worse:
            statistics.worseDropped += 1
        case .stale:
            statistics.staleDropped += 1
        }
        return admission
    }

    /// The load of `generation` ended without a last event to deliver (it was cancelled).
    mutating func ended(row index: Int, generation: Int) {
        if rows[index]?.load?.generation == generation { rows[index]?.load = nil }
    }

    /// What row `index` shows now, for tests and diagnostics.
    func shown(at index: Int) -> Variant? {
        rows[index]?.shown?.variant
    }

    /// The width of what row `index` shows now, when known.
    func shownWidth(at index: Int) -> Int? {
        rows[index]?.shown?.width
    }
}

extension Variant {
    /// How good a variant is: the original beats the thumbnail.
    var rank: Int {
        switch self {
        case .thumbnail: return 1
        case .original: return 2
        }
    }
}
