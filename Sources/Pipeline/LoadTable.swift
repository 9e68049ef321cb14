import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics

/// The pipeline's bookkeeping of loads in flight and the callers waiting for them: a value that
/// returns what to do (start a load, cancel one, resume continuations), tested without I/O. The
/// pipeline keeps it under its lock and carries the actions out after releasing the lock.
///
/// - Identical loads share one entry. Cancelling one waiter leaves the others waiting; when the
///   last one leaves, the load is *abandoned*: its task is cancelled, but the entry stays until the
///   task ends, so that a caller arriving meanwhile joins it. If the body had fully arrived, that
///   caller gets it (nothing is fetched twice); if the transfer was stopped, the load starts again
///   for the callers that joined.
/// - Every waiter is forgotten once resumed, and every load once its task ended (or `purge`
///   dropped it): when no call is running, the table is empty.
/// - A load's `RequestPriority` (what the transport reads) is the most urgent of its waiters'
///   priorities, set again each time a waiter joins, leaves or changes its priority
///   (`reprioritize`); a load nobody waits for (a prefetch) keeps the priority it was started with.
///
/// `Continuation` is what a waiter is resumed through, `Handle` what cancels a load's task.
struct LoadTable<Continuation, Handle> {
    /// A caller waiting in `ImagePipeline.image(for:)`.
    typealias WaiterID = Int
    /// One run of a load's task.
    typealias LoadID = Int

    struct Load {
        var id: LoadID
        var waiters: Set<WaiterID> = []
        var handle: Handle?
        /// Started by `prefetch`, and nobody has waited for it since.
        var isPrefetch: Bool
        /// Every waiter left and the task was told to stop.
        var isAbandoned = false
        /// What the transport reads: the most urgent of the waiters' priorities.
        var priority: RequestPriority
    }

    private struct Waiter {
        var url: ImageURL
        /// The caller's priority, which it may change (`reprioritize`).
        var priority: RequestPriority
        var machine = WaiterStateMachine<Continuation>()
    }

    private var waiters: [WaiterID: Waiter] = [:]
    private(set) var loads: [ImageURL: Load] = [:]
    private var lastID = 0

    /// Waiters whose calls have not returned.
    var waiterCount: Int { waiters.count }
    /// Whether nothing is remembered: no waiter, no load.
    var isEmpty: Bool { waiters.isEmpty && loads.isEmpty }

    private mutating func makeID() -> Int {
        lastID += 1
        return lastID
    }

    // MARK: - Waiters

    /// A new waiter for `url` at `priority`, before its continuation exists.
    mutating func makeWaiter(for url: ImageURL, priority: RequestPriority = RequestPriority()) -> WaiterID {
        let id = makeID()
        waiters[id] = Waiter(url: url, priority: priority)
        return id
    }

    /// The most urgent priority of `load`'s waiters, set on its `RequestPriority`; a load with no
    /// waiter keeps its value.
    private func updatePriority(of load: Load) {
        guard let most = load.waiters.lazy.compactMap({ waiters[$0]?.priority.value }).max() else { return }
        if load.priority.value != most { load.priority.value = most }
    }

    /// A waiter's caller changed the value of `priority`: the loads it waits for take it into
    /// account (it may now be the most urgent, or no longer).
    func reprioritize(_ priority: RequestPriority) {
        var urls: Set<ImageURL> = []
        for waiter in waiters.values where waiter.priority === priority { urls.insert(waiter.url) }
        for url in urls {
            if let load = loads[url] { updatePriority(of: load) }
        }
    }

    /// What the transport reads for the load of `url`, if one is in flight (the same object for
    /// the load's whole life, restarts included).
    func requestPriority(of url: ImageURL) -> RequestPriority? {
        loads[url]?.priority
    }

    /// What to do after `register`.
    enum RegisterAction {
        /// Resume the continuation as cancelled now (the caller was cancelled already).
        case resumeCancelled(Continuation)
        /// Start a task for this new load (at `requestPriority(of:)`), then report its handle with `started`.
        case start(ImageURL, LoadID)
        /// Joined a load in flight: wait.
        case joined
    }

    /// The waiter's continuation now exists: join the load of its URL, or start one.
    mutating func register(_ id: WaiterID, _ continuation: Continuation) -> RegisterAction {
        guard var waiter = waiters[id] else { preconditionFailure("an unknown waiter registered") }
        switch waiter.machine.register(continuation) {
        case .resumeCancelled(let continuation):
            waiters[id] = nil
            return .resumeCancelled(continuation)
        case .wait:
            waiters[id] = waiter
        }
        if var load = loads[waiter.url] {
            if load.isPrefetch { load.priority.value = waiter.priority.value }
            load.waiters.insert(id)
            load.isPrefetch = false
            loads[waiter.url] = load
            updatePriority(of: load)
            return .joined
        }
        let load = Load(id: makeID(), waiters: [id], isPrefetch: false, priority: RequestPriority(waiter.priority.value))
        loads[waiter.url] = load
        return .start(waiter.url, load.id)
    }

    /// What to do after `cancel`.
    enum CancelAction {
        /// Nothing now (the waiter is resumed when it registers, or was resumed already).
        case none
        /// Resume the continuation as cancelled, and cancel the load's task if there is one: it
        /// was the last waiter.
        case resumeCancelled(Continuation, cancelling: Handle?)
    }

    /// The waiter's task was cancelled, at any moment.
    mutating func cancel(_ id: WaiterID) -> CancelAction {
        // Gone: resumed and forgotten already.
        guard var waiter = waiters[id] else { return .none }
        guard case .resume(let continuation) = waiter.machine.cancel() else {
            waiters[id] = waiter   // cancelled before registration: `register` resumes it
            return .none
        }
        waiters[id] = nil
        guard var load = loads[waiter.url], load.waiters.remove(id) != nil else {
            return .resumeCancelled(continuation, cancelling: nil)
        }
        var cancelling: Handle?
        if load.waiters.isEmpty && !load.isAbandoned {
            load.isAbandoned = true
            cancelling = load.handle   // nil: `started` cancels it when the handle arrives
        }
        loads[waiter.url] = load
        updatePriority(of: load)
        return .resumeCancelled(continuation, cancelling: cancelling)
    }

    // MARK: - Loads

    /// A load for `url` with nobody waiting, at `priority`, unless one is in flight: the load to
    /// start, if any.
    mutating func prefetch(_ url: ImageURL, priority: LoadPriority = LoadPriority(.prefetch)) -> LoadID? {
        guard loads[url] == nil else { return nil }
        let load = Load(id: makeID(), isPrefetch: true, priority: RequestPriority(priority))
        loads[url] = load
        return load.id
    }

    /// The task of load `id` exists: returns it again when it must be cancelled at once (its
    /// waiters left, or `purge` dropped it, before it existed).
    mutating func started(_ url: ImageURL, _ id: LoadID, handle: Handle) -> Handle? {
        guard var load = loads[url], load.id == id else { return handle }
        load.handle = handle
        loads[url] = load
        return load.isAbandoned ? handle : nil
    }

    /// What to do after `finished`.
    enum FinishAction {
        /// Resume these continuations with the load's result.
        case resume([Continuation])
        /// The abandoned load was stopped, but callers joined it meanwhile: start it again.
        case restart(ImageURL, LoadID)
    }

    /// The task of load `id` ended; `stopped` says whether it ended because it was cancelled.
    mutating func finished(_ url: ImageURL, _ id: LoadID, stopped: Bool) -> FinishAction {
        guard let load = loads[url], load.id == id else { return .resume([]) }
        if stopped && load.isAbandoned && !load.waiters.isEmpty {
            let restarted = Load(id: makeID(), waiters: load.waiters, isPrefetch: false, priority: load.priority)
            loads[url] = restarted
            updatePriority(of: restarted)
            return .restart(url, restarted.id)
        }
        loads[url] = nil
        var continuations: [Continuation] = []
        for id in load.waiters {
            if case .resume(let continuation) = waiters[id]?.machine.deliver() { continuations.append(continuation) }
            waiters[id] = nil
        }
        return .resume(continuations)
    }

    /// Forgets the loads nobody waits for (prefetches, abandoned loads): their handles, to cancel.
    mutating func purge() -> [Handle] {
        var handles: [Handle] = []
        for (url, load) in loads where load.waiters.isEmpty {
            if let handle = load.handle { handles.append(handle) }
            loads[url] = nil
        }
        return handles
    }
}
