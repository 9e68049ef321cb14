@testable import Fetch
import Policy
import Testing

/// The line of transfers, without I/O: connection limits, cancellations, freed slots.
struct TransferQueueTests {
    func transfer(_ url: String) -> Transfer {
        Transfer(url: ImageURL(url)!, maximumBodySize: 1 << 20)
    }

    @Test func limitsPerHostAndInAllTakeHostsInTurn() {
        var queue = TransferQueue(maximumConnections: 3, maximumConnectionsPerHost: 2)
        let a = (0..<3).map { transfer("http://a.test/\($0).png") }
        let b = (0..<2).map { transfer("http://b.test/\($0).png") }
        for item in a + b { queue.enqueue(item) }
        let started = queue.takeStartable()
        #expect(started.map(\.url) == [a[0].url, b[0].url, a[1].url])
        #expect(queue.running == 3 && queue.waiting == 2)
        #expect(queue.takeStartable().isEmpty)
        queue.release(a[0])
        // a has one running (limit 2), b one: the freed slot goes to the host next in turn.
        #expect(queue.takeStartable().map(\.url) == [a[2].url])
    }

    @Test func aCancelledWaitingTransferLeavesTheLineAndARunningOneIsReported() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let running = transfer("http://a.test/1.png")
        let waiting = transfer("http://a.test/2.png")
        let next = transfer("http://a.test/3.png")
        for item in [running, waiting, next] { queue.enqueue(item) }
        #expect(queue.takeStartable().map(\.url) == [running.url])
        for item in [running, waiting] {
            item.markCancelled()
            queue.cancel(item)
        }
        let cancelled = queue.takeCancellations(everything: false)
        #expect(Set(cancelled.map(\.url)) == [running.url, waiting.url])
        #expect(queue.waiting == 1)
        // The thread removes the running one, which frees its slot for the next.
        queue.release(running)
        #expect(queue.takeStartable().map(\.url) == [next.url])
    }

    @Test func aShutdownTakesEveryWaitingTransfer() {
        var queue = TransferQueue(maximumConnections: 1, maximumConnectionsPerHost: 1)
        let items = (0..<4).map { transfer("http://a.test/\($0).png") }
        for item in items { queue.enqueue(item) }
        _ = queue.takeStartable()
        #expect(queue.takeCancellations(everything: true).map(\.url) == items.dropFirst().map(\.url))
        #expect(queue.waiting == 0)
    }

    @Test func nothingStartsWhileSuspended() {
        var queue = TransferQueue(maximumConnections: 4, maximumConnectionsPerHost: 4)
        queue.enqueue(transfer("http://a.test/1.png"))
        queue.suspended = true
        #expect(queue.takeStartable().isEmpty)
        queue.suspended = false
        #expect(queue.takeStartable().count == 1)
    }
}
