import Support
import Policy
import Pipeline
import Transport
import Caching
import Accounting
import HTTPSemantics

/// The images of a list or grid on a network that changes: the piece an app drives from its table
/// view. It knows the items, which rows are visible and near, and the user's gesture; it asks the
/// policy per row, runs one load per row through the loader, and reports per row on the app's actor.
///
/// - **Priorities.** Visible rows load first, in screen order (`LoadPriority(.visible, order:)`),
///   then the `nearRows` rows above and below, then the rows the policy's `PrefetchPlan` allows.
///   Priorities change as rows move (the transport reorders waiting transfers); a row that leaves
///   the near range loses its load, unless the prefetch plan would load the same thing.
/// - **Scrolling.** While flinging no download starts, except for the rows where the fling will
///   stop when the app says so (`setFlingTarget(_:)`); while dragging only visible rows' downloads
///   start; cache hits are delivered at once, always. On `.idle` the visible rows start first.
/// - **Never blank when something is cached.** While an original downloads for a row that shows
///   nothing, its cached thumbnail is shown; an image never replaces a better one shown (a late
///   thumbnail after the original is dropped); a better one is delivered as `.upgraded`.
/// - **Re-deciding.** A network or settings change decides the rows again: better, the better
///   variant loads and replaces the shown one only when it has arrived; worse, nothing shown is
///   replaced, and downloads a decision made now would not start are cancelled unless the policy
///   lets running loads finish; offline, downloads stop at once.
/// - **Nothing stale.** Each event is checked on the delivery actor, just before the handler runs,
///   against the row's current load: once `setItems`, `setVisibleRows` or `stop()` has returned on
///   the delivery actor, nothing of a superseded load is delivered.
///
/// Thread safety: every method may be called from any thread; the handler runs isolated to the
/// delivery actor with no lock held (it may call back into the list).
///
/// ```swift
/// let list = ImageList(loader: loader, nearRows: 3) { event in     // on the main actor
///     cells[event.row]?.show(event)
/// }
/// list.setItems(feed.items)
/// list.setVisibleRows(0..<8)
/// list.start()                      // follows the network state from now on
/// // scrollViewWillBeginDragging: list.setScrollPhase(.dragging)
/// // scrollViewWillEndDragging:   list.setFlingTarget(rowsAt(targetContentOffset))
/// // scrollViewDidEndDragging:    list.setScrollPhase(.flinging)
/// // scrollViewDidScroll:         list.setVisibleRows(first..<last + 1)
/// // scrollViewDidEndDecelerating: list.setScrollPhase(.idle)
/// ```
///
/// In use: the `Fetch` guide “Embedding in a List”.
public final class ImageList: Sendable {
    private typealias Rows = ListRows<Task<Void, Never>>

    private struct State {
        var rows: Rows
        var following: [Task<Void, Never>] = []
    }

    /// The loader: policy, reachability, settings, pipeline.
    public let loader: ImageLoader
    private let deliveryActor: any Actor
    /// Runs isolated to `deliveryActor`.
    private let onEvent: @Sendable (RowEvent) -> Void
    private let rules: ListRules
    // Guards the rows, their loads and the tasks following changes; never held while the handler runs.
    private let state: Locked<State>

    /// Creates a list that reports to `onEvent` on the main actor.
    ///
    /// - Parameters:
    ///   - loader: decides with its policy, reachability and settings, and loads with its pipeline.
    ///   - nearRows: how many rows above and below the visible ones load at `.near` priority (and
    ///     are reported) ahead of the prefetch plan.
    ///   - onEvent: what the list reports for each row, on the main actor.
    public convenience init(loader: ImageLoader, nearRows: Int = 3, onEvent: @escaping @MainActor @Sendable (RowEvent) -> Void) {
        self.init(loader: loader, nearRows: nearRows, deliveringOn: MainActor.shared) { event in
            MainActor.assumeIsolated { onEvent(event) }
        }
    }

    /// Creates a list that reports to `onEvent` isolated to `actor` (the handler may use
    /// `actor.assumeIsolated` to reach the actor's state).
    ///
    /// - Parameters:
    ///   - loader: decides with its policy, reachability and settings, and loads with its pipeline.
    ///   - nearRows: how many rows above and below the visible ones load at `.near` priority.
    ///   - actor: where `onEvent` runs.
    ///   - onEvent: what the list reports for each row.
    public convenience init(loader: ImageLoader, nearRows: Int = 3, deliveringOn actor: any Actor,
                            onEvent: @escaping @Sendable (RowEvent) -> Void) {
        self.init(loader: loader, nearRows: nearRows, deliveringOn: actor, rules: .policy(loader.policy), onEvent: onEvent)
    }

    /// Creates a list whose prefetch plan and "let running loads finish" answer come from `rules`
    /// instead of the policy (tests).
    init(loader: ImageLoader, nearRows: Int, deliveringOn actor: any Actor, rules: ListRules,
         onEvent: @escaping @Sendable (RowEvent) -> Void) {
        self.loader = loader
        deliveryActor = actor
        self.onEvent = onEvent
        self.rules = rules
        state = Locked(State(rows: Rows(nearRows: nearRows, network: loader.reachability.currentState)))
    }

    // MARK: - What the app tells the list

    /// Row i shows `items[i]`. Rows whose item changed have their loads cancelled (nothing more
    /// is delivered for the old item), then the rows are decided again.
    public func setItems(_ items: [ImageItem]) {
        let actions = state.withLock { $0.rows.setItems(items) }
        perform(actions)
        refresh()
    }

    /// The rows on screen now (top to bottom). Starts, reprioritises and cancels loads.
    public func setVisibleRows(_ rows: Range<Int>) {
        change(\.visible, to: rows)
    }

    /// The user's gesture: while flinging no download starts (cache hits are still delivered),
    /// except for the rows of the fling's target (`setFlingTarget(_:)`); while dragging only
    /// visible rows' downloads start; on `.idle` the visible rows load first.
    public func setScrollPhase(_ phase: ScrollPhase) {
        change(\.phase, to: phase)
    }

    /// Where the fling stops, as the scroll view predicts it (UIKit's
    /// `scrollViewWillEndDragging(_:withVelocity:targetContentOffset:)`, Android's
    /// `OverScroller.getFinalY()`): the rows that will be on screen then, top to bottom.
    ///
    /// While `.flinging` with a target, the target rows download at visible priority, in screen
    /// order, so their images are there (or on their way) when the fling lands; the rows passed
    /// over still start nothing. A new target (another fling) cancels the downloads of rows that
    /// are neither targeted nor visible any more. The target may be given just before
    /// `setScrollPhase(.flinging)` (UIKit's order); it holds through a drag that catches the fling
    /// (give the new fling's target then) and `.idle` forgets it: the usual rules apply where the
    /// fling really stopped. `nil` forgets it at once.
    ///
    /// ```swift
    /// func scrollViewWillEndDragging(_ view: UIScrollView, withVelocity velocity: CGPoint,
    ///                                targetContentOffset target: UnsafeMutablePointer<CGPoint>) {
    ///     list.setFlingTarget(rows(at: target.pointee.y))
    /// }
    /// func scrollViewDidEndDragging(_ view: UIScrollView, willDecelerate: Bool) {
    ///     list.setScrollPhase(willDecelerate ? .flinging : .idle)
    /// }
    /// ```
    public func setFlingTarget(_ rows: Range<Int>?) {
        change(\.flingTarget, to: rows)
    }

    /// Every row's width on screen in pixels (points × scale; nil, the default: unknown). The rows
    /// are decided again with it: a policy testing `thumbnailCoversDisplay` (the bundled
    /// `thumbnail-when-enough`) loads a row's thumbnail when it is at least this wide (see
    /// `ImageItem.thumbnailCovers(displayWidth:)`). A wider display upgrades the rows to the
    /// original as a better network would (`.upgraded` once it has arrived); a narrower one
    /// replaces nothing shown. The same width again does nothing.
    ///
    /// ```swift
    /// list.setDisplayWidth(Int(table.bounds.width * screen.scale))   // also on rotation
    /// ```
    public func setDisplayWidth(_ width: Int?) {
        change(\.displayWidth, to: width)
    }

    /// The width given to `setDisplayWidth(_:)`.
    public var displayWidth: Int? {
        state.withLock { $0.rows.displayWidth }
    }

    /// Sets one input of the rows and refreshes, unless it holds that value already.
    private func change<Value: Equatable>(_ input: WritableKeyPath<Rows, Value>, to value: Value) {
        let changed = state.withLock { state -> Bool in
            guard state.rows[keyPath: input] != value else { return false }
            state.rows.changed()
            state.rows[keyPath: input] = value
            return true
        }
        if changed { refresh() }
    }

    /// Starts following `loader.reachability.stateChanges()` (and `settingsChanges`, if given):
    /// each change decides the rows again (visible, near and prefetch). Returns at once; `stop()`
    /// ends it.
    public func start(settingsChanges: AsyncStream<Void>? = nil) {
        let states = loader.reachability.stateChanges()
        var tasks = [Task { [weak self] in
            for await network in states {
                guard let self else { return }
                networkChanged(to: network)
            }
        }]
        if let settingsChanges {
            tasks.append(Task { [weak self] in
                for await _ in settingsChanges {
                    guard let self else { return }
                    settingsChanged()
                }
            })
        }
        let stopped = state.withLock { state -> Bool in
            if !state.rows.isStopped { state.following += tasks }
            return state.rows.isStopped
        }
        if stopped { for task in tasks { task.cancel() } }
    }

    /// Decides the rows again for `network`, as a change reported by the reachability would (for
    /// apps that observe changes themselves, and tests). The same state again does nothing.
    public func networkChanged(to network: NetworkState) {
        let (changed, returned) = state.withLock { state -> (Bool, Bool) in
            guard state.rows.network != network, !state.rows.isStopped else { return (false, false) }
            let wasOffline = state.rows.network.kind == .offline || state.rows.network.isCaptive
            state.rows.network = network
            state.rows.redecide()
            return (true, wasOffline && network.kind != .offline && !network.isCaptive)
        }
        // Transfers waiting to retry after a failure go now rather than at the end of their backoff.
        if returned { loader.pipeline.downloader.networkReturned() }
        if changed { refresh() }
    }

    /// Decides the rows again with the settings as they are now.
    public func settingsChanged() {
        state.withLock { $0.rows.redecide() }
        refresh()
    }

    /// Cancels every load and stops following changes; nothing more is delivered (once it has
    /// returned on the delivery actor). A stopped list stays stopped: make a new one to start again.
    public func stop() {
        let (actions, following) = state.withLock { state in
            defer { state.following = [] }
            return (state.rows.stop(), state.following)
        }
        for task in following { task.cancel() }
        perform(actions)
    }

    // MARK: - What the list tells

    /// Counters for tests, the command and benchmarks.
    public var statistics: ImageListStatistics {
        state.withLock { $0.rows.statistics }
    }

    /// The network state the rows were last decided for.
    public var network: NetworkState {
        state.withLock { $0.rows.network }
    }

    /// The width in pixels of the image row `row` shows, when the item says it (a rung of its
    /// ladder, or an original or thumbnail of known width); nil otherwise or when it shows none.
    public func shownWidth(row: Int) -> Int? {
        state.withLock { $0.rows.shownWidth(at: row) }
    }

    /// The variant row `row` shows (as delivered since it came into the near range), if any.
    public func shownVariant(row: Int) -> Variant? {
        state.withLock { $0.rows.shown(at: row) }
    }

    // MARK: - Refresh

    /// Decides the rows of the window (outside the lock: the settings store may read a file),
    /// then applies the decisions, unless a newer change came meanwhile (its refresh applies).
    private func refresh() {
        let rows = state.withLock { $0.rows }
        guard !rows.isStopped else { return }
        let network = rows.network, displayWidth = rows.displayWidth
        let settings: Result<ResolvedSettings, DataFileError>
        do throws(DataFileError) {
            settings = .success(try loader.policy.resolveSettings(from: loader.settings))
        } catch {
            settings = .failure(error)
        }
        var context = ListRows<Task<Void, Never>>.Context(plan: .nothing, letsRunningLoadsFinish: false)
        if case .success(let resolved) = settings {
            context.plan = rules.plan(network, resolved)
            context.letsRunningLoadsFinish = rules.letsRunningLoadsFinish(network, resolved)
        }
        let pipeline = loader.pipeline
        let estimate = pipeline.linkEstimate(for: network)
        let facts = rows.window(plan: context.plan).map { row, priority in
            let item = rows.items[row]
            let decision = settings.map {
                loader.policy.decide(item, network: network, settings: $0, cache: pipeline, displayWidth: displayWidth,
                                     estimate: estimate)
            }
            let url = try? decision.get().url
            return Rows.Facts(row: row, item: item, priority: priority, decision: decision,
                              variantCached: url.map(pipeline.containsImage(at:)) ?? false,
                              thumbnailCached: item.thumbnail.map(pipeline.containsImage(at:)) ?? false)
        }
        let actions = state.withLock { $0.rows.refresh(epoch: rows.epoch, facts: facts, context: context) }
        perform(actions)
    }

    private func perform(_ actions: Rows.Actions) {
        for handle in actions.cancel { handle.cancel() }
        for (priority, value) in actions.reprioritize { loader.setPriority(value, of: priority) }
        for start in actions.start { launch(start) }
    }

    private func launch(_ start: Rows.Start) {
        var loader = self.loader
        loader.displayWidth = state.withLock { $0.rows.displayWidth }   // a decision made again keeps it
        let task = Task { [self, loader] in await run(start, loader: loader) }
        state.withLock { $0.rows.started(row: start.row, generation: start.generation, handle: task) }?.cancel()
    }

    // MARK: - Loads

    private func run(_ start: Rows.Start, loader: ImageLoader) async {
        let (row, item) = (start.row, start.item)
        switch start.work {
        case .placeholder(let decision):
            await deliver(.placeholder(row: row, item: item, decision: decision), as: .placeholder, start, isLast: true)
        case .decisionFailed(let error):
            await deliver(.decisionFailed(row: row, item: item, error: error), as: .decisionFailed, start, isLast: true)
        case .cachedThumbnail(let decision, let url):
            if let image = await loader.pipeline.cachedImage(for: url) {
                await deliver(.imageReady(row: row, item: item, decision: decision, variant: .thumbnail, image: image),
                              as: .image(ShownQuality(.thumbnail, url: url, of: item)), start, isLast: true)
            } else {
                await deliver(.placeholder(row: row, item: item, decision: decision), as: .placeholder, start, isLast: true)
            }
        case .load(let decision, let fallback):
            async let fallbackDelivered: Void = deliverCachedThumbnail(fallback, decision: decision, start)
            let event = await loader.load(item, decision: decision, priority: start.priority)
            if Task.isCancelled {
                state.withLock { $0.rows.ended(row: row, generation: start.generation) }
            } else {
                let (rowEvent, delivery) = Self.rowEvent(event, row: row, item: item)
                await deliver(rowEvent, as: delivery, start, isLast: true)
            }
            await fallbackDelivered
        }
    }

    /// Shows the cached thumbnail at `url` while the original downloads (dropped if the original
    /// arrived first).
    private func deliverCachedThumbnail(_ url: ImageURL?, decision: Decision, _ start: Rows.Start) async {
        guard let url, let image = await loader.pipeline.cachedImage(for: url), !Task.isCancelled else { return }
        await deliver(.imageReady(row: start.row, item: start.item, decision: decision, variant: .thumbnail, image: image),
                      as: .image(ShownQuality(.thumbnail, url: url, of: start.item)), start, isLast: false)
    }

    private static func rowEvent(_ event: SlotEvent, row: Int, item: ImageItem) -> (RowEvent, Rows.Delivery) {
        switch event {
        case .placeholder(let decision):
            return (.placeholder(row: row, item: item, decision: decision), .placeholder)
        case .imageReady(let decision, let variant, let image):
            return (.imageReady(row: row, item: item, decision: decision, variant: variant, image: image),
                    .image(ShownQuality(variant, url: image.url, of: item)))
        case .failed(let decision, let error, let fallback):
            return (.failed(row: row, item: item, decision: decision, error: error, fallback: fallback),
                    .failed(url: error.url, fallback: fallback.map { ShownQuality(.thumbnail, url: $0.url, of: item) }))
        case .decisionFailed(let error):
            return (.decisionFailed(row: row, item: item, error: error), .decisionFailed)
        }
    }

    private func deliver(_ event: RowEvent, as delivery: Rows.Delivery, _ start: Rows.Start, isLast: Bool) async {
        await deliver(event, as: delivery, generation: start.generation, isLast: isLast, on: deliveryActor)
    }

    /// Runs on the delivery actor: the check and the handler, with no lock held by the handler.
    private func deliver(_ event: RowEvent, as delivery: Rows.Delivery, generation: Int, isLast: Bool,
                         on actor: isolated any Actor) {
        // A cancelled load (the row moved on, or `stop()`) delivers nothing.
        if Task.isCancelled {
            if isLast { state.withLock { $0.rows.ended(row: event.row, generation: generation) } }
            return
        }
        let admission = state.withLock { $0.rows.admit(delivery, row: event.row, generation: generation, isLast: isLast) }
        guard case .deliver(let upgraded) = admission else { return }
        if upgraded, case .imageReady(let row, let item, let decision, let variant, let image) = event {
            onEvent(.upgraded(row: row, item: item, decision: decision, variant: variant, image: image))
        } else {
            onEvent(event)
        }
    }
}

/// Where a list's prefetch plan and its "let running loads finish" answer come from: the
/// policy, or (in tests) closures.
struct ListRules: Sendable {
    var plan: @Sendable (NetworkState, ResolvedSettings) -> PrefetchPlan
    var letsRunningLoadsFinish: @Sendable (NetworkState, ResolvedSettings) -> Bool

    /// The policy's answers.
    static func policy(_ policy: ImagePolicy) -> ListRules {
        ListRules(plan: { policy.prefetchPlan(for: $0, settings: $1) },
                  letsRunningLoadsFinish: { policy.letsRunningLoadsFinish(on: $0, settings: $1) })
    }
}
