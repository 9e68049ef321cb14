import Policy
import Transport

/// The pipeline's bookkeeping of loads in flight and the callers waiting for them: a value that
/// returns what to do (start a load, cancel one, resume continuations, change a load's
/// priority), tested without I/O. The pipeline keeps it under its lock and carries the actions
/// out after releasing the lock. It holds values only: it never touches the objects the actions
/// name (a `RequestPriority`, a task).
///
/// - Identical loads share one entry. Cancelling one waiter leaves the others waiting; when the
///   last one leaves, the load is *abandoned*: its task is cancelled, but the entry stays until the
///   task ends, so that a caller arriving meanwhile joins it. If the body had fully arrived, that
///   caller gets it (nothing is fetched twice); if the transfer was stopped, the load starts again
///   for the callers that joined.
/// - Every waiter is forgotten once resumed, and every load once its task ended (or `purge`
///   dropped it): when no call is running, the table is empty.
/// - A load's priority (what the transport reads) is the most urgent of its waiters' priorities,
///   computed again each time a waiter joins, leaves or changes its priority (`reprioritize`); a
///   load nobody waits for (a prefetch) keeps the priority it was started with. Each change comes
///   back as a `PriorityChange` for the caller to apply to the load's `Context`, numbered so that
///   changes applied out of order (after the lock) can be told apart: a change older than the
///   last one applied to that load is stale.
/// - The network a load runs on is its last caller's (the one that started it, or a later one
///   that named its network when it joined); a prefetch has none.
///
/// `Continuation` is what a waiter is resumed through, `Handle` what cancels a load's task,
/// `Context` what the caller keeps per load (the pipeline: the `RequestPriority` the transport
/// reads), made by the caller when a load is created and kept for the load's whole life,
/// restarts included.
struct LoadTable<Continuation, Handle, Context> {
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
        /// What the transport should read: the most urgent of the waiters' priorities.
        var priority: LoadPriority
        /// The network the load runs on (its last caller's that named one).
        var network: NetworkState?
        /// The caller's per-load state.
        var context: Context
    }

    /// A change of a load's priority, to apply to its context.
    struct PriorityChange {
        /// The load's URL.
        var url: ImageURL
        /// The context of the load whose priority changed.
        var context: Context
        /// The new priority.
        var value: LoadPriority
        /// Increases with each change the table makes: apply a change only if no later one was
        /// applied to the same load before it.
        var revision: Int
    }

    private struct Waiter {
        var url: ImageURL
        /// Names the caller's priority object, which it may change (`reprioritize`).
        var key: ObjectIdentifier?
        /// The caller's priority.
        var priority: LoadPriority
        /// The network the caller's load runs on, if it said.
        var network: NetworkState?
        var machine = WaiterStateMachine<Continuation>()
    }

    private var waiters: [WaiterID: Waiter] = [:]
    private(set) var loads: [ImageURL: Load] = [:]
    private var lastID = 0
    private var lastRevision = 0

    /// Waiters whose calls have not returned.
    var waiterCount: Int { waiters.count }
    /// Whether nothing is remembered: no waiter, no load.
    var isEmpty: Bool { waiters.isEmpty && loads.isEmpty }

    private mutating func makeID() -> Int {
        lastID += 1
        return lastID
    }

    // MARK: - Priorities

    /// The priority of the load of `url` in flight, if any.
    func priority(of url: ImageURL) -> LoadPriority? {
        loads[url]?.priority
    }

    /// The context of the load of `url` in flight, if any (the same for the load's whole life,
    /// restarts included).
    func context(of url: ImageURL) -> Context? {
        loads[url]?.context
    }

    /// The most urgent priority of the waiters of the load of `url`, set as its priority; the
    /// change, if it changed. A load with no waiter keeps its value.
    private mutating func updatePriority(of url: ImageURL) -> PriorityChange? {
        guard var load = loads[url] else { return nil }
        var most: LoadPriority?
        for id in load.waiters {
            if let priority = waiters[id]?.priority, most.map({ priority > $0 }) ?? true { most = priority }
        }
        guard let most, most != load.priority else { return nil }
        load.priority = most
        loads[url] = load
        return change(of: load, at: url)
    }

    private mutating func change(of load: Load, at url: ImageURL) -> PriorityChange {
        lastRevision += 1
        return PriorityChange(url: url, context: load.context, value: load.priority, revision: lastRevision)
    }

    /// The caller's priority named `key` is now `value`: the loads it waits for take it into
    /// account (it may now be the most urgent, or no longer). Returns the changes to apply.
    mutating func reprioritize(_ key: ObjectIdentifier, to value: LoadPriority) -> [PriorityChange] {
        var urls: Set<ImageURL> = []
        for (id, waiter) in waiters where waiter.key == key {
            waiters[id]?.priority = value
            urls.insert(waiter.url)
        }
        return urls.compactMap { updatePriority(of: $0) }
    }

    // MARK: - Waiters

    /// A new waiter for `url` at `priority` (its caller's priority object named by `key`, if it
    /// may change it), on `network` (nil: unknown), before its continuation exists.
    mutating func makeWaiter(for url: ImageURL, priority: LoadPriority = .visible, key: ObjectIdentifier? = nil,
                             network: NetworkState? = nil) -> WaiterID {
        let id = makeID()
        waiters[id] = Waiter(url: url, key: key, priority: priority, network: network)
        return id
    }

    /// What to do after `register`.
    enum RegisterAction {
        /// Resume the continuation as cancelled now (the caller was cancelled already).
        case resumeCancelled(Continuation)
        /// Start a task for this new load (on `context(of:)`), then report its handle with `started`.
        case start(ImageURL, LoadID)
        /// Joined a load in flight: wait, after applying the change of its priority, if any.
        case joined(PriorityChange?)
    }

    /// The waiter's continuation now exists: join the load of its URL, or start one (whose
    /// context `newLoad` makes from its first priority).
    mutating func register(_ id: WaiterID, _ continuation: Continuation,
                           newLoad: (LoadPriority) -> Context) -> RegisterAction {
        guard var waiter = waiters[id] else { preconditionFailure("an unknown waiter registered") }
        switch waiter.machine.register(continuation) {
        case .resumeCancelled(let continuation):
            waiters[id] = nil
            return .resumeCancelled(continuation)
        case .wait:
            waiters[id] = waiter
        }
        if var load = loads[waiter.url] {
            let wasPrefetch = load.isPrefetch
            if wasPrefetch { load.priority = waiter.priority }
            load.waiters.insert(id)
            load.isPrefetch = false
            if let network = waiter.network { load.network = network }
            loads[waiter.url] = load
            // A prefetch takes its first caller's priority, whether or not it is more urgent.
            let change = updatePriority(of: waiter.url) ?? (wasPrefetch ? change(of: load, at: waiter.url) : nil)
            return .joined(change)
        }
        let load = Load(id: makeID(), waiters: [id], isPrefetch: false, priority: waiter.priority, network: waiter.network,
                        context: newLoad(waiter.priority))
        loads[waiter.url] = load
        return .start(waiter.url, load.id)
    }

    /// What to do after `cancel`.
    enum CancelAction {
        /// Nothing now (the waiter is resumed when it registers, or was resumed already).
        case none
        /// Resume the continuation as cancelled, cancel the load's task if there is one (it was
        /// the last waiter), and apply the change of the load's priority, if any.
        case resumeCancelled(Continuation, cancelling: Handle?, priority: PriorityChange?)
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
            return .resumeCancelled(continuation, cancelling: nil, priority: nil)
        }
        var cancelling: Handle?
        if load.waiters.isEmpty && !load.isAbandoned {
            load.isAbandoned = true
            cancelling = load.handle   // nil: `started` cancels it when the handle arrives
        }
        loads[waiter.url] = load
        return .resumeCancelled(continuation, cancelling: cancelling, priority: updatePriority(of: waiter.url))
    }

    // MARK: - Loads

    /// A load for `url` with nobody waiting, at `priority` (its context made by `newLoad`),
    /// unless one is in flight: the load to start, if any.
    mutating func prefetch(_ url: ImageURL, priority: LoadPriority = LoadPriority(.prefetch),
                           newLoad: (LoadPriority) -> Context) -> LoadID? {
        guard loads[url] == nil else { return nil }
        let load = Load(id: makeID(), isPrefetch: true, priority: priority, context: newLoad(priority))
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
        /// The abandoned load was stopped, but callers joined it meanwhile: apply the change of
        /// its priority, if any, and start it again.
        case restart(ImageURL, LoadID, priority: PriorityChange?)
    }

    /// The task of load `id` ended; `stopped` says whether it ended because it was cancelled.
    mutating func finished(_ url: ImageURL, _ id: LoadID, stopped: Bool) -> FinishAction {
        guard let load = loads[url], load.id == id else { return .resume([]) }
        if stopped && load.isAbandoned && !load.waiters.isEmpty {
            let restarted = Load(id: makeID(), waiters: load.waiters, isPrefetch: false, priority: load.priority,
                                 network: load.network, context: load.context)
            loads[url] = restarted
            return .restart(url, restarted.id, priority: updatePriority(of: url))
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
