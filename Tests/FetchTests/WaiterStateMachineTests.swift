import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Policy
import Testing

/// The waiter's life and the pipeline's table of loads, without I/O: every order of register,
/// cancel and deliver resumes each waiter exactly once and leaves nothing behind.
struct WaiterStateMachineTests {
    typealias Machine = WaiterStateMachine<String>

    @Test func registeredThenDelivered() {
        var machine = Machine()
        guard case .wait = machine.register("c") else { Issue.record("expected to wait"); return }
        guard case .resume("c") = machine.deliver() else { Issue.record("expected the continuation"); return }
        #expect(machine.isFinished)
        guard case .none = machine.cancel() else { Issue.record("a cancel after delivery resumes nothing"); return }
        #expect(machine.isFinished)
    }

    @Test func registeredThenCancelled() {
        var machine = Machine()
        _ = machine.register("c")
        guard case .resume("c") = machine.cancel() else { Issue.record("expected the continuation"); return }
        guard case .none = machine.deliver() else { Issue.record("a delivery after cancel resumes nothing"); return }
        guard case .none = machine.cancel() else { Issue.record("a second cancel resumes nothing"); return }
        #expect(machine.isFinished)
    }

    @Test func cancelledBeforeRegistration() {
        var machine = Machine()
        guard case .none = machine.cancel() else { Issue.record("nothing to resume yet"); return }
        #expect(!machine.isFinished)
        guard case .none = machine.deliver() else { Issue.record("not registered: nothing to deliver"); return }
        guard case .resumeCancelled("c") = machine.register("c") else { Issue.record("expected an immediate cancel"); return }
        #expect(machine.isFinished)
    }
}

/// The pipeline's bookkeeping, driven by random schedules of every event.
struct ImagePipelineLoadTableTests {
    typealias Table = LoadTable<Int, String, LoadPriority>

    let urls = (0..<7).map { doubleURL("t\($0)") }

    /// Thousands of waiters over a few URLs, each cancelled at a random moment (before it
    /// registers, while it waits, after its result, never), loads finishing, failing, being
    /// stopped, purged, prefetched, in random order: each waiter is resumed exactly once, and
    /// at the end the table is empty.
    @Test(arguments: 0..<8)
    func thousandsOfWaitersCancelledAtEveryMomentLeaveNothing(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed) + 1)
        var table = Table()
        var resumed: [Int: Int] = [:]       // waiter → times resumed
        var created: [Int] = []             // waiters not registered yet
        var live: [Int] = []                // registered or cancelled waiters whose call has not ended
        var tasks: [(url: ImageURL, load: Int)] = []   // loads with a task
        var total = 0
        func resume(_ waiter: Int) { resumed[waiter, default: 0] += 1 }
        func handle(_ action: Table.RegisterAction) {
            switch action {
            case .resumeCancelled(let waiter): resume(waiter)
            case .start(let url, let load):
                tasks.append((url, load))
                if let cancel = table.started(url, load, handle: "\(load)") { #expect(cancel == "\(load)") }
            case .joined: break
            }
        }
        func finish(_ index: Int) {
            let (url, load) = tasks.remove(at: index)
            switch table.finished(url, load, stopped: random.next(3) == 0) {
            case .resume(let waiters): waiters.forEach(resume)
            case .restart(let url, let load, _):
                tasks.append((url, load))
                _ = table.started(url, load, handle: "\(load)")
            }
        }
        while total < 3000 || !created.isEmpty || !tasks.isEmpty {
            let roll = random.next(10)
            if roll < 3 && total < 3000 {
                let waiter = table.makeWaiter(for: urls[random.next(urls.count)])
                created.append(waiter)
                live.append(waiter)
                total += 1
            } else if roll < 5 && !created.isEmpty {
                let waiter = created.remove(at: random.next(created.count))
                handle(table.register(waiter, waiter))
            } else if roll < 7 && !live.isEmpty {
                // Cancel at any moment: before registration, while waiting, after the result.
                let waiter = live.remove(at: random.next(live.count))
                if case .resumeCancelled(let continuation, _, _) = table.cancel(waiter) { resume(continuation) }
            } else if roll == 8 {
                let url = urls[random.next(urls.count)]
                if let load = table.prefetch(url) { tasks.append((url, load)) }
            } else if roll == 9 && random.next(20) == 0 {
                _ = table.purge()
            } else if !tasks.isEmpty && (roll == 7 || total >= 3000) {
                finish(random.next(tasks.count))
            }
        }
        // Every waiter was resumed once; the table forgot every one of them and every load.
        #expect(resumed.count == total)
        #expect(resumed.values.allSatisfy { $0 == 1 })
        #expect(table.isEmpty, "loads \(table.loads.count), waiters \(table.waiterCount)")
    }

    @Test func aWaiterCancelledAfterItsResultLeavesNoTrace() {
        var table = Table()
        let waiters = (0..<2000).map { _ in table.makeWaiter(for: urls[0]) }
        for waiter in waiters { _ = table.register(waiter, waiter) }
        guard case .resume(let resumed) = table.finished(urls[0], 2001, stopped: false) else { Issue.record("expected a delivery"); return }
        #expect(resumed.count == 2000)
        for waiter in waiters { guard case .none = table.cancel(waiter) else { Issue.record("resumed twice"); return } }
        #expect(table.isEmpty)
    }

    @Test func theLastWaiterLeavingAbandonsTheLoadAndANewCallerJoinsIt() {
        var table = Table()
        let first = table.makeWaiter(for: urls[0])
        guard case .start(_, let load) = table.register(first, 1) else { Issue.record("expected a start"); return }
        #expect(table.started(urls[0], load, handle: "task") == nil)
        guard case .resumeCancelled(1, cancelling: "task", _) = table.cancel(first) else { Issue.record("expected the task to stop"); return }
        // The transfer is stopping; a new caller joins it instead of starting another.
        let second = table.makeWaiter(for: urls[0])
        guard case .joined = table.register(second, 2) else { Issue.record("expected to join"); return }
        // The body had arrived: the new caller gets it.
        guard case .resume([2]) = table.finished(urls[0], load, stopped: false) else { Issue.record("expected a delivery"); return }
        #expect(table.isEmpty)
    }

    @Test func aStoppedLoadThatGainedCallersStartsAgain() {
        var table = Table()
        let first = table.makeWaiter(for: urls[0])
        guard case .start(_, let load) = table.register(first, 1) else { Issue.record("expected a start"); return }
        _ = table.cancel(first)                          // abandoned before its task existed
        #expect(table.started(urls[0], load, handle: "task") == "task")
        let second = table.makeWaiter(for: urls[0])
        _ = table.register(second, 2)
        guard case .restart(_, let again, _) = table.finished(urls[0], load, stopped: true) else { Issue.record("expected a restart"); return }
        #expect(table.started(urls[0], again, handle: "task2") == nil)
        guard case .resume([2]) = table.finished(urls[0], again, stopped: false) else { Issue.record("expected a delivery"); return }
        #expect(table.isEmpty)
    }

    @Test func purgeDropsLoadsNobodyWaitsForAndTheirLateHandlesAreCancelled() {
        var table = Table()
        let load = table.prefetch(urls[0])!
        #expect(table.prefetch(urls[0]) == nil)           // one load per URL
        #expect(table.purge().isEmpty)                    // no handle yet
        #expect(table.started(urls[0], load, handle: "late") == "late")
        #expect(table.isEmpty)
    }
}

extension LoadTable where Context == LoadPriority {
    /// `register`, each new load's context its first priority (tests without a pipeline).
    mutating func register(_ id: WaiterID, _ continuation: Continuation) -> RegisterAction {
        register(id, continuation, newLoad: { $0 })
    }

    /// `prefetch`, the load's context its priority.
    mutating func prefetch(_ url: ImageURL, priority: LoadPriority = LoadPriority(.prefetch)) -> LoadID? {
        prefetch(url, priority: priority, newLoad: { $0 })
    }
}

/// A small deterministic generator (SplitMix64) so that a failing schedule can be replayed.
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
