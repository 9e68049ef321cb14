import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing

/// The line of transfers as a plain value, without I/O: priority order over hosts, connection
/// limits, priorities changed while waiting, cancellations, freed slots.
struct TransferQueueTests {
    /// `a1` is `http://a.test/1.png`: the letter is the host.
    static func transfer(_ name: String, _ priority: LoadPriority = .visible) -> Transfer {
        Transfer(url: ImageURL("http://\(name.prefix(1)).test/\(name.dropFirst()).png")!, maximumBodySize: 1 << 20,
                 priority: RequestPriority(priority))
    }

    static func name(_ transfer: Transfer) -> String {
        let url = transfer.url.absoluteString
        return String(url.dropFirst(7).prefix(1)) + String(url.split(separator: "/").last!.dropLast(4))
    }

    /// One choice: transfers started first (to fill slots), then transfers queued in order,
    /// priorities changed and transfers cancelled while they wait, and what the next choice starts.
    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var connections = 8
        var perHost = 6
        var running: [String] = []
        var waiting: [(String, LoadPriority)]
        var changed: [(String, LoadPriority)] = []
        var cancelled: [String] = []
        var starts: [String]

        var testDescription: String { name }
    }

    static let visible0 = LoadPriority(.visible, order: 0)
    static let visible2 = LoadPriority(.visible, order: 2)
    static let near0 = LoadPriority(.near, order: 0)
    static let near3 = LoadPriority(.near, order: 3)
    static let prefetch0 = LoadPriority(.prefetch, order: 0)
    static let prefetch1 = LoadPriority(.prefetch, order: 1)

    static let scenarios: [Scenario] = [
        Scenario(name: "most urgent first across hosts", connections: 3,
                 waiting: [("a1", prefetch0), ("b1", visible2), ("c1", near0), ("a2", visible0)],
                 starts: ["a2", "b1", "c1"]),
        Scenario(name: "within a tier the smaller order first", connections: 2,
                 waiting: [("a1", near3), ("b1", prefetch0), ("c1", near0)],
                 starts: ["c1", "a1"]),
        Scenario(name: "first in, first out among equals, whatever the host", connections: 3,
                 waiting: [("a1", visible0), ("b1", visible0), ("a2", visible0), ("c1", visible0)],
                 starts: ["a1", "b1", "a2"]),
        Scenario(name: "a host at its limit does not hold back another host", connections: 4, perHost: 1,
                 running: ["a0"],
                 waiting: [("a1", visible0), ("a2", visible0), ("b1", prefetch1)],
                 starts: ["b1"]),
        Scenario(name: "the per-host limit caps the urgent host, the rest go to others", connections: 4, perHost: 2,
                 waiting: [("a1", visible0), ("a2", visible0), ("a3", visible0), ("b1", prefetch0), ("c1", prefetch1)],
                 starts: ["a1", "a2", "b1", "c1"]),
        Scenario(name: "no free slot in all: nothing starts", connections: 1,
                 running: ["a0"],
                 waiting: [("b1", visible0)],
                 starts: []),
        Scenario(name: "a priority raised while waiting overtakes", connections: 1,
                 waiting: [("a1", near0), ("a2", prefetch0), ("b1", prefetch1)],
                 changed: [("b1", visible0)],
                 starts: ["b1"]),
        Scenario(name: "a priority lowered while waiting falls behind", connections: 1,
                 waiting: [("a1", visible0), ("b1", near3)],
                 changed: [("a1", prefetch0)],
                 starts: ["b1"]),
        Scenario(name: "a cancelled waiting transfer never starts", connections: 2,
                 waiting: [("a1", visible0), ("a2", near0), ("b1", prefetch0)],
                 cancelled: ["a1"],
                 starts: ["a2", "b1"]),
    ]

    @Test(arguments: scenarios)
    func theNextChoice(_ scenario: Scenario) {
        var queue = TransferQueue(maximumConnections: scenario.connections, maximumConnectionsPerHost: scenario.perHost)
        let running = scenario.running.map { Self.transfer($0) }
        for transfer in running { queue.enqueue(transfer) }
        #expect(queue.takeStartable().map(Self.name) == scenario.running)
        var byName: [String: Transfer] = [:]
        for (name, priority) in scenario.waiting {
            byName[name] = Self.transfer(name, priority)
            queue.enqueue(byName[name]!)
        }
        for (name, priority) in scenario.changed { byName[name]!.priority.value = priority }
        for name in scenario.cancelled {
            byName[name]!.markCancelled()
            queue.cancel(byName[name]!)
        }
        #expect(Set(queue.takeCancellations(everything: false).map(Self.name)) == Set(scenario.cancelled))
        #expect(queue.takeStartable().map(Self.name) == scenario.starts)
        #expect(queue.running == scenario.running.count + scenario.starts.count)
        #expect(queue.waiting == scenario.waiting.count - scenario.cancelled.count - scenario.starts.count)
    }

    @Test func aFreedSlotGoesToTheMostUrgentWaitingNow() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let first = Self.transfer("a0")
        queue.enqueue(first)
        #expect(queue.takeStartable().map(Self.name) == ["a0"])
        let prefetch = Self.transfer("a1", Self.prefetch0)
        let near = Self.transfer("a2", Self.near0)
        queue.enqueue(prefetch)
        queue.enqueue(near)
        #expect(queue.takeStartable().isEmpty)
        prefetch.priority.value = Self.visible0
        queue.release(first)
        #expect(queue.takeStartable().map(Self.name) == ["a1"])
        queue.release(prefetch)
        #expect(queue.takeStartable().map(Self.name) == ["a2"])
        #expect(queue.waiting == 0 && queue.running == 1)
    }

    @Test func aCancelledRunningTransferIsReportedAndItsReleaseFreesItsSlot() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let running = Self.transfer("a1")
        let waiting = Self.transfer("a2")
        let next = Self.transfer("a3")
        for item in [running, waiting, next] { queue.enqueue(item) }
        #expect(queue.takeStartable().map(Self.name) == ["a1"])
        for item in [running, waiting] {
            item.markCancelled()
            queue.cancel(item)
        }
        #expect(Set(queue.takeCancellations(everything: false).map(Self.name)) == ["a1", "a2"])
        #expect(queue.waiting == 1)
        // The thread removes the running one, which frees its slot for the next.
        queue.release(running)
        #expect(queue.takeStartable().map(Self.name) == ["a3"])
    }

    @Test func aShutdownTakesEveryWaitingTransferInTheOrderQueued() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let items = ["a0", "b1", "a2", "c3"].map { Self.transfer($0, Self.near0) }
        for item in items { queue.enqueue(item) }
        #expect(queue.takeStartable().map(Self.name) == ["a0"])
        #expect(queue.takeCancellations(everything: true).map(Self.name) == ["b1", "a2", "c3"])
        #expect(queue.waiting == 0)
    }

    @Test func nothingStartsWhileSuspended() {
        var queue = TransferQueue(maximumConnections: 4, maximumConnectionsPerHost: 4)
        queue.enqueue(Self.transfer("a1"))
        queue.suspended = true
        #expect(queue.takeStartable().isEmpty)
        queue.suspended = false
        #expect(queue.takeStartable().count == 1)
    }

    /// The line stays sorted: a choice reads no priority when none changed since the last one
    /// (each was read when queued), and every waiting one again after one changed, which then
    /// goes where it now belongs.
    @Test func aChoiceReadsThePrioritiesAgainOnlyAfterOneChanged() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let items = (0..<100).map { Self.transfer("a\($0)", Self.near0) }
        for item in items { queue.enqueue(item) }
        #expect(queue.prioritiesRead == 100)
        #expect(queue.takeStartable().map(Self.name) == ["a0"])
        #expect(queue.prioritiesRead == 100)
        queue.release(items[0])
        #expect(queue.takeStartable().map(Self.name) == ["a1"])
        #expect(queue.prioritiesRead == 100)
        queue.release(items[1])
        items[50].priority.value = Self.visible0
        #expect(queue.takeStartable().map(Self.name) == ["a50"])
        #expect(queue.prioritiesRead == 100 + 98)
        queue.release(items[50])
        #expect(queue.takeStartable().map(Self.name) == ["a2"])
        #expect(queue.prioritiesRead == 198)
        #expect(queue.waiting == 96)
    }

    /// A transfer queued more urgent than the last one goes before every less urgent one, behind
    /// the as urgent ones queued before it, without any priority read again.
    @Test func aMoreUrgentTransferQueuedLaterGoesAheadOfTheLessUrgent() {
        var queue = TransferQueue(maximumConnections: 3, maximumConnectionsPerHost: 3)
        for (name, priority) in [("a1", Self.visible0), ("a2", Self.prefetch0), ("a3", Self.prefetch1), ("a4", Self.visible0), ("a5", Self.near0)] {
            queue.enqueue(Self.transfer(name, priority))
        }
        #expect(queue.takeStartable().map(Self.name) == ["a1", "a4", "a5"])
        #expect(queue.prioritiesRead == 5)
    }

    /// The cost of a choice among 1,000 waiting transfers of 10 hosts (8 free slots): each
    /// priority is read once; a turn of the transport thread when every waiting host is at its
    /// limit reads none. `IMGPOLICY_PRINT_QUEUE_COST=1` prints the times (README figures).
    @Test func choosingAmongAThousandWaitingTransfersIsCheap() {
        let rounds = 20
        let clock = ContinuousClock()
        var choosing = Duration.zero
        var blocked = Duration.zero
        for round in 0..<rounds {
            var queue = TransferQueue(maximumConnections: 8, maximumConnectionsPerHost: 6)
            for index in 0..<1000 {
                let tier = LoadPriority.Tier.allCases[(index * 7 + round) % 3]
                queue.enqueue(Self.transfer("\(Character(UnicodeScalar(97 + index % 10)!))\(index)", LoadPriority(tier, order: index % 37)))
            }
            var started: [Transfer] = []
            choosing += clock.measure { started = queue.takeStartable() }
            #expect(started.count == 8)
            #expect(started.allSatisfy { $0.priority.value.tier == .visible })
            #expect(queue.prioritiesRead == 1000)
            // One host only, at its limit: the thread's every turn asks, and nothing may start.
            var full = TransferQueue(maximumConnections: 8, maximumConnectionsPerHost: 6)
            for index in 0..<1000 { full.enqueue(Self.transfer("a\(index)")) }
            #expect(full.takeStartable().count == 6)
            let readsBefore = full.prioritiesRead
            blocked += clock.measure { _ = full.takeStartable() }
            #expect(full.prioritiesRead == readsBefore)
        }
        if ProcessInfo.processInfo.environment["IMGPOLICY_PRINT_QUEUE_COST"] == "1" {
            print("choice among 1,000 waiting (8 slots): \(choosing / rounds); turn with every host at its limit: \(blocked / rounds)")
        }
    }

    // MARK: - Gathering a burst (issue 17)

    static let millisecond: UInt64 = 1_000_000

    /// Tasks of a list's rows reach the queue in any order: with one slot free, what a burst
    /// queued least urgent first starts with is its most urgent transfer, chosen when the burst
    /// has been quiet for a window, not the first to arrive.
    @Test func aBurstQueuedOutOfOrderStartsInPriorityOrder() {
        let ms = Self.millisecond
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1, gatheringWindow: 2 * ms)
        let prefetch = Self.transfer("a1", Self.prefetch0), near = Self.transfer("a2", Self.near0), visible = Self.transfer("a3", Self.visible2)
        // The first opens a gathering (the thread is woken to time it), the others join it.
        let opensAGathering = queue.enqueue(prefetch, now: 0)
        #expect(opensAGathering)
        #expect(queue.takeStartable(now: 0).isEmpty)
        let nearWakes = queue.enqueue(near, now: ms / 2)
        #expect(!nearWakes)
        let visibleWakes = queue.enqueue(visible, now: ms)
        #expect(!visibleWakes)
        #expect(queue.gatheringEnds == 3 * ms)
        #expect(queue.takeStartable(now: 3 * ms - 1).isEmpty)
        #expect(queue.takeStartable(now: 3 * ms).map(Self.name) == ["a3"])
        #expect(queue.gatheringEnds == nil)
        // The rest start as slots free, most urgent first, with no gathering: they were queued.
        queue.release(visible)
        #expect(queue.takeStartable(now: 3 * ms).map(Self.name) == ["a2"])
        queue.release(near)
        #expect(queue.takeStartable(now: 3 * ms).map(Self.name) == ["a1"])
    }

    /// Nothing can overtake the top priority (`download(_:)`'s, the command's): it starts at
    /// once, alone or while a gathering lasts, and the thread is woken for it.
    @Test func theTopPriorityStartsAtOnceEvenWhileABurstGathers() {
        let ms = Self.millisecond
        var queue = TransferQueue(maximumConnections: 2, maximumConnectionsPerHost: 2, gatheringWindow: 2 * ms)
        let alone = Self.transfer("a0", Self.visible0)
        let aloneWakes = queue.enqueue(alone, now: 0)
        #expect(aloneWakes)
        #expect(queue.gatheringEnds == nil)
        #expect(queue.takeStartable(now: 0).map(Self.name) == ["a0"])
        queue.release(alone)
        let nearOpens = queue.enqueue(Self.transfer("a1", Self.near0), now: ms)
        #expect(nearOpens)
        let topWakes = queue.enqueue(Self.transfer("a2", Self.visible0), now: ms + 1)
        #expect(topWakes)
        #expect(queue.takeStartable(now: ms + 2).map(Self.name) == ["a2"])
        #expect(queue.gatheringEnds == 3 * ms + 1)
        #expect(queue.takeStartable(now: 3 * ms + 1).map(Self.name) == ["a1"])
    }

    /// A burst that never falls quiet is gathered for four windows at most; a transfer queued
    /// with no slot free opens no gathering (it waits for a slot anyway).
    @Test func aGatheringLastsFourWindowsAtMostAndNeedsAFreeSlot() {
        let ms = Self.millisecond
        var queue = TransferQueue(maximumConnections: 8, maximumConnectionsPerHost: 6, gatheringWindow: 2 * ms)
        for step in 0..<20 { queue.enqueue(Self.transfer("a\(step)", Self.prefetch0), now: UInt64(step) * ms) }
        #expect(queue.gatheringEnds == 8 * ms)
        #expect(queue.takeStartable(now: 8 * ms).count == 6)
        let wakesWithNoSlot = queue.enqueue(Self.transfer("a99", Self.near0), now: 9 * ms)
        #expect(!wakesWithNoSlot)
        #expect(queue.gatheringEnds == nil)
    }

    /// A shutdown ends a gathering with everything else.
    @Test func aShutdownEndsAGathering() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1, gatheringWindow: 2 * Self.millisecond)
        queue.enqueue(Self.transfer("a1", Self.near0), now: 0)
        #expect(queue.gatheringEnds != nil)
        #expect(queue.takeCancellations(everything: true).map(Self.name) == ["a1"])
        #expect(queue.gatheringEnds == nil)
    }
}
