import Fetch
@testable import Pipeline
@testable import Transport
import Policy
import Testing

/// The load table's priorities as actions, without I/O: the table keeps values, returns each
/// change, and changes applied out of order (as threads do after the pipeline's lock) still end on
/// the table's last word when stale ones are dropped by revision.
struct LoadTablePriorityTests {
    typealias Table = LoadTable<Int, String, Int>

    let url = doubleURL("priority")

    @Test func aCallerJoiningAPrefetchGivesItsPriorityEvenWhenLessUrgent() {
        var table = Table()
        var made: [LoadPriority] = []
        let load = table.prefetch(url, priority: .visible, newLoad: { made.append($0); return made.count })
        #expect(load != nil && made == [.visible])
        let waiter = table.makeWaiter(for: url, priority: LoadPriority(.prefetch, order: 9))
        guard case .joined(let change?) = table.register(waiter, 1, newLoad: { _ in Issue.record("no new load"); return 0 }) else {
            Issue.record("expected a change"); return
        }
        #expect(change.context == 1 && change.url == url && change.value == LoadPriority(.prefetch, order: 9))
        #expect(table.priority(of: url) == LoadPriority(.prefetch, order: 9))
    }

    @Test func aJoinThatChangesNothingReturnsNoChange() {
        var table = Table()
        let first = table.makeWaiter(for: url, priority: .visible)
        guard case .start = table.register(first, 1, newLoad: { _ in 7 }) else { Issue.record("expected a start"); return }
        let second = table.makeWaiter(for: url, priority: LoadPriority(.prefetch))
        guard case .joined(nil) = table.register(second, 2, newLoad: { _ in 0 }) else { Issue.record("expected no change"); return }
        // The less urgent one leaving changes nothing either; the most urgent one leaving does.
        guard case .resumeCancelled(2, cancelling: nil, nil) = table.cancel(second) else { Issue.record("expected no change"); return }
        #expect(table.context(of: url) == 7)
    }

    @Test func aRestartKeepsTheLoadsContextAndTakesTheLastCallersNetwork() {
        var table = Table()
        let first = table.makeWaiter(for: url, priority: .visible, network: NetworkState(.wifi))
        guard case .start(_, let load) = table.register(first, 1, newLoad: { _ in 42 }) else { Issue.record("expected a start"); return }
        #expect(table.loads[url]?.network == NetworkState(.wifi))
        _ = table.started(url, load, handle: "task")
        _ = table.cancel(first)                                   // abandoned
        let second = table.makeWaiter(for: url, priority: LoadPriority(.near), network: NetworkState(.cellular))
        guard case .joined(let change?) = table.register(second, 2, newLoad: { _ in 0 }) else { Issue.record("expected a change"); return }
        #expect(change.value == LoadPriority(.near))
        guard case .restart(_, _, priority: nil) = table.finished(url, load, stopped: true) else { Issue.record("expected a restart"); return }
        #expect(table.context(of: url) == 42)
        #expect(table.loads[url]?.network == NetworkState(.cellular))
    }

    @Test func aReprioritizedCallerMovesEveryLoadItWaitsFor() {
        var table = Table()
        let key = ObjectIdentifier(RequestPriority())
        let other = doubleURL("other")
        var next = 0
        for target in [url, other] {
            let waiter = table.makeWaiter(for: target, priority: LoadPriority(.prefetch), key: key)
            _ = table.register(waiter, waiter, newLoad: { _ in next += 1; return next })
        }
        let changes = table.reprioritize(key, to: .visible)
        #expect(Set(changes.map(\.context)) == [1, 2])
        #expect(changes.allSatisfy { $0.value == .visible })
        #expect(Set(changes.map(\.revision)).count == 2)
        #expect(table.reprioritize(key, to: .visible).isEmpty)        // nothing changes twice
        #expect(table.reprioritize(ObjectIdentifier(RequestPriority()), to: .visible).isEmpty)
    }

    /// Random joins, leaves, changes, restarts; the changes applied in a shuffled order at random
    /// moments, each dropped when a later one was applied to its load. In the end every load's
    /// applied priority is the table's.
    @Test(arguments: 0..<6)
    func changesAppliedOutOfOrderEndOnTheTablesPriority(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed) + 100)
        print("LoadTablePriorityTests seed \(seed)")
        var table = Table()
        let urls = (0..<3).map { doubleURL("p\($0)") }
        let keys = (0..<4).map { _ in RequestPriority() }
        let values = [LoadPriority(.prefetch, order: 3), LoadPriority(.near, order: 1), .visible, LoadPriority(.visible, order: 5)]
        var applied: [Int: (value: LoadPriority, revision: Int)] = [:]   // context → last change applied
        var pending: [Table.PriorityChange] = []
        var waiting: [Int] = []
        var tasks: [(url: ImageURL, load: Int)] = []
        var contexts = 0
        func newLoad(_ value: LoadPriority) -> Int {
            contexts += 1
            applied[contexts] = (value, 0)
            return contexts
        }
        func apply(_ change: Table.PriorityChange) {
            if let last = applied[change.context], change.revision <= last.revision { return }
            applied[change.context] = (change.value, change.revision)
        }
        for _ in 0..<2000 {
            switch random.next(6) {
            case 0, 1:
                let key = keys[random.next(keys.count)]
                let id = table.makeWaiter(for: urls[random.next(urls.count)], priority: values[random.next(values.count)],
                                          key: ObjectIdentifier(key))
                switch table.register(id, id, newLoad: newLoad) {
                case .start(let url, let load):
                    tasks.append((url, load))
                    _ = table.started(url, load, handle: "\(load)")
                case .joined(let change): pending += change.map { [$0] } ?? []
                case .resumeCancelled: break
                }
                waiting.append(id)
            case 2 where !waiting.isEmpty:
                let id = waiting.remove(at: random.next(waiting.count))
                if case .resumeCancelled(_, _, let change) = table.cancel(id) { pending += change.map { [$0] } ?? [] }
            case 3:
                pending += table.reprioritize(ObjectIdentifier(keys[random.next(keys.count)]), to: values[random.next(values.count)])
            case 4 where !tasks.isEmpty && random.next(4) == 0:
                let (url, load) = tasks.remove(at: random.next(tasks.count))
                switch table.finished(url, load, stopped: random.next(2) == 0) {
                case .restart(let url, let load, let change):
                    pending += change.map { [$0] } ?? []
                    tasks.append((url, load))
                    _ = table.started(url, load, handle: "\(load)")
                case .resume(let resumed): waiting.removeAll { resumed.contains($0) }
                }
            default:
                // Some of the changes made so far land now, in any order.
                while !pending.isEmpty && random.next(3) != 0 { apply(pending.remove(at: random.next(pending.count))) }
            }
        }
        while !pending.isEmpty { apply(pending.remove(at: random.next(pending.count))) }
        for url in urls {
            guard let context = table.context(of: url), let priority = table.priority(of: url) else { continue }
            #expect(applied[context]?.value == priority, "\(url)")
        }
    }

    @Test func aLoadsRequestPriorityDropsAChangeOlderThanTheLastApplied() {
        let priority = LoadRequestPriority(LoadPriority(.prefetch))
        priority.apply(.visible, revision: 2)
        priority.apply(LoadPriority(.near), revision: 1)          // landed late: stale
        #expect(priority.request.value == .visible)
        priority.apply(LoadPriority(.near), revision: 3)
        #expect(priority.request.value == LoadPriority(.near))
    }
}
