/// The transfers waiting for a connection slot (first in, first out per host, hosts taken in turn),
/// the count of running ones, and the cancellations not yet carried out. A plain value: the
/// transport keeps it under its lock; its thread takes work from it.
struct TransferQueue {
    /// A first-in, first-out list that removes from the front in O(1).
    private struct FIFO {
        private var items: [Transfer] = []
        private var head = 0

        var isEmpty: Bool { head == items.count }
        var count: Int { items.count - head }

        mutating func append(_ transfer: Transfer) { items.append(transfer) }

        mutating func popFirst() -> Transfer? {
            guard head < items.count else { return nil }
            let transfer = items[head]
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return transfer
        }

        /// Removes the transfers for which `shouldRemove` is true.
        mutating func removeAll(where shouldRemove: (Transfer) -> Bool) {
            items = Array(items[head...]).filter { !shouldRemove($0) }
            head = 0
        }

        /// Removes and returns every transfer.
        mutating func removeAll() -> [Transfer] {
            defer { items = []; head = 0 }
            return Array(items[head...])
        }
    }

    private let maximumConnections: Int
    private let maximumConnectionsPerHost: Int
    private var pendingByHost: [String: FIFO] = [:]
    private var hostOrder: [String] = []
    private var runningByHost: [String: Int] = [:]
    private var cancellations: [Transfer] = []
    /// Transfers counted as running (taken by `takeStartable` and not yet released).
    private(set) var running = 0
    /// Whether nothing new may start (see `CurlTransport.suspend()`).
    var suspended = false

    init(maximumConnections: Int, maximumConnectionsPerHost: Int) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }

    /// Transfers waiting for a slot.
    var waiting: Int { pendingByHost.values.reduce(0) { $0 + $1.count } }

    /// Puts `transfer` at the end of its host's line.
    mutating func enqueue(_ transfer: Transfer) {
        if pendingByHost[transfer.hostKey] == nil {
            pendingByHost[transfer.hostKey] = FIFO()
            hostOrder.append(transfer.hostKey)
        }
        pendingByHost[transfer.hostKey]?.append(transfer)
    }

    /// Notes that `transfer` (already marked cancelled) must stop.
    mutating func cancel(_ transfer: Transfer) {
        cancellations.append(transfer)
    }

    /// The transfers to stop now: those cancelled (running, or still waiting, which leave the
    /// line here), or every waiting transfer when `everything` (a shutdown). A transfer may be
    /// listed twice; finishing it twice is harmless.
    mutating func takeCancellations(everything: Bool) -> [Transfer] {
        var taken = cancellations
        cancellations.removeAll()
        guard !taken.isEmpty || everything else { return [] }
        for host in hostOrder {
            if everything {
                taken += pendingByHost[host]?.removeAll() ?? []
            } else {
                pendingByHost[host]?.removeAll { transfer in
                    if transfer.isCancelled { taken.append(transfer) }
                    return transfer.isCancelled
                }
            }
        }
        forgetIdleHosts()
        return taken
    }

    /// The transfers that may start now, within the connection limits, counted as running.
    mutating func takeStartable() -> [Transfer] {
        guard !suspended else { return [] }
        var start: [Transfer] = []
        var progress = true
        while progress && running < maximumConnections {
            progress = false
            for host in hostOrder where running < maximumConnections {
                guard runningByHost[host, default: 0] < maximumConnectionsPerHost,
                      let transfer = pendingByHost[host]?.popFirst() else { continue }
                running += 1
                runningByHost[host, default: 0] += 1
                start.append(transfer)
                progress = true
            }
        }
        forgetIdleHosts()
        return start
    }

    /// Counts a transfer taken by `takeStartable` as no longer running: its slot is free.
    mutating func release(_ transfer: Transfer) {
        running -= 1
        runningByHost[transfer.hostKey, default: 1] -= 1
        if runningByHost[transfer.hostKey] == 0, pendingByHost[transfer.hostKey]?.isEmpty ?? true {
            runningByHost[transfer.hostKey] = nil
            pendingByHost[transfer.hostKey] = nil
            hostOrder.removeAll { $0 == transfer.hostKey }
        }
    }

    private mutating func forgetIdleHosts() {
        hostOrder.removeAll { host in
            let idle = pendingByHost[host]?.isEmpty ?? true && runningByHost[host, default: 0] == 0
            if idle { pendingByHost[host] = nil; runningByHost[host] = nil }
            return idle
        }
    }
}
