import HTTPSemantics
/// The transfers waiting for a connection slot, the count of running ones, and the cancellations
/// not yet carried out. A plain value: the transport keeps it under its lock; its thread takes work
/// from it.
///
/// Order: waiting transfers start most urgent first over all hosts (`LoadPriority`, as their
/// `RequestPriority` holds it at the moment of choosing, so that a priority changed while a
/// transfer waits reorders it), first in, first out among equal priorities, within
/// `maximumConnections` in all and `maximumConnectionsPerHost` per host. A host at its limit is
/// skipped: it never holds back a less urgent transfer to another host.
///
/// Bursts (`TransportConfiguration.gatheringWindow`): the loads of a list's rows are queued by
/// tasks of their own, which reach the queue in whatever order the scheduler runs them, a
/// prefetch before a visible row as often as not. A transfer queued while a slot is free therefore
/// does not start at once: it opens a *gathering*, which lasts until no transfer has been queued
/// for one window (each one queued meanwhile joins it and extends it), and at most four windows
/// from its start; only then does the choice run, over everything queued by then, most urgent
/// first. Nothing can overtake a transfer at the top priority (`LoadPriority.visible`, order 0:
/// what `download(_:)` and the command use), so such a transfer starts at once, gathering or not.
/// A slot freed while nothing gathers is filled at once, from the line as it is.
///
/// Cost: the line is kept sorted by the priorities as last read. Each priority is read when its
/// transfer is queued (an append, or an insertion when it is more urgent than the last one), and
/// every waiting transfer's priority is read again, and the line sorted again, only at the first
/// choice after one of them changed (each `RequestPriority` counts its changes in the queue's
/// `PriorityChanges`). A choice otherwise takes the first transfers of the line whose host has a
/// free slot: O(free slots), plus the transfers of hosts at their limit it passes over. When every
/// host with waiting transfers is at its limit, or no slot is free, nothing is read at all (the
/// common case on the transport thread, which asks after every turn of its loop).
struct TransferQueue {
    /// A transfer waiting for a slot, with its priority as last read, its place in the line (for
    /// first in, first out among equal priorities) and its host's number.
    private struct Waiting {
        let transfer: Transfer
        // The transfer's own (which keeps it): read straight from here, without reference counting.
        unowned(unsafe) let priority: RequestPriority
        var urgency: Int64
        let sequence: UInt64
        let host: Int

        /// More urgent, or as urgent and queued earlier.
        func precedes(_ other: Waiting) -> Bool {
            urgency != other.urgency ? urgency > other.urgency : sequence < other.sequence
        }
    }

    /// A host with transfers running or waiting, known by a small number so that a choice
    /// counts slots without hashing host names.
    private struct Host {
        var key: String
        var running = 0
        var waiting = 0
    }

    private let maximumConnections: Int
    private let maximumConnectionsPerHost: Int
    // Most urgent first (`Waiting.precedes`, by the priorities as last read); the transfers
    // waiting are those from `head` on (taking the first ones only moves `head`).
    private var line: [Waiting] = []
    private var head = 0
    // Counted by the priorities of the transfers queued here; `changesSeen` as of the last sort.
    private let changes = PriorityChanges()
    private var changesSeen: UInt64 = 0
    // By number; a host with nothing running or waiting is forgotten and its number reused.
    private var hosts: [Host] = []
    private var hostNumbers: [String: Int] = [:]
    private var freeHostNumbers: [Int] = []
    private var nextSequence: UInt64 = 0
    // The gathering window and the gathering in progress (when its first and its latest transfer
    // were queued), in nanoseconds of the caller's monotonic clock.
    private let gatheringWindow: UInt64
    private var gathering: (first: UInt64, latest: UInt64)?
    /// The urgency of `LoadPriority.visible` (order 0): nothing can overtake it.
    private static let topUrgency = RequestPriority.urgency(of: .visible)
    private var cancellations: [Transfer] = []
    /// Transfers counted as running (taken by `takeStartable` and not yet released).
    private(set) var running = 0
    /// Whether nothing new may start (see `CurlTransport.suspend()`).
    var suspended = false
    /// Priorities read so far (one when a transfer is queued, every waiting one again after a
    /// change): what the line costs, for tests.
    private(set) var prioritiesRead = 0

    /// `gatheringWindow`: in nanoseconds (0: every transfer may start as soon as it is queued).
    init(maximumConnections: Int, maximumConnectionsPerHost: Int, gatheringWindow: UInt64 = 0) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.gatheringWindow = gatheringWindow
    }

    /// When the gathering in progress ends (on the clock of the `now` arguments), if one is.
    var gatheringEnds: UInt64? {
        gathering.map { min($0.latest &+ gatheringWindow, $0.first &+ 4 &* gatheringWindow) }
    }

    /// Transfers waiting for a slot.
    var waiting: Int { line.count - head }

    /// Puts `transfer` in the line, behind every transfer of the same priority, at `now`
    /// (nanoseconds of a monotonic clock). Returns whether the transport thread must be woken: when
    /// a slot is free for it now (nothing suspended, a slot free in all and for its host) and it may
    /// start at once (the top priority, or no gathering window), or it opens a gathering (the thread
    /// must then wait for its end, not longer). A slot is freed only by the thread itself, which
    /// chooses again before it waits; a transfer joining a gathering is chosen at its end.
    @discardableResult
    mutating func enqueue(_ transfer: Transfer, now: UInt64 = 0) -> Bool {
        let host = number(of: transfer.hostKey)
        hosts[host].waiting += 1
        // Watched before it is read: a change after the read is counted.
        transfer.priority.watch(changes)
        let entry = Waiting(transfer: transfer, priority: transfer.priority, urgency: transfer.priority.urgency,
                            sequence: nextSequence, host: host)
        prioritiesRead += 1
        nextSequence += 1
        if head == line.count || !entry.precedes(line[line.count - 1]) {
            line.append(entry)
        } else {
            // More urgent than the last: before the first it precedes (the line is sorted).
            var low = head, high = line.count - 1
            while low < high {
                let middle = (low + high) / 2
                if entry.precedes(line[middle]) { high = middle } else { low = middle + 1 }
            }
            line.insert(entry, at: low)
        }
        if var burst = gathering {
            burst.latest = max(burst.latest, now)
            gathering = burst
        }
        guard !suspended, running < maximumConnections, hasFreeSlot(host) else { return false }
        if gatheringWindow == 0 || entry.urgency >= Self.topUrgency { return true }
        guard gathering == nil else { return false }
        gathering = (now, now)
        return true
    }

    /// Notes that `transfer` (already marked cancelled) must stop.
    mutating func cancel(_ transfer: Transfer) {
        cancellations.append(transfer)
    }

    /// The transfers to stop now: those cancelled (running, or still waiting, which leave the
    /// line here), or every waiting transfer when `everything` (a shutdown; in the order they were
    /// queued). A transfer may be listed twice; finishing it twice is harmless.
    mutating func takeCancellations(everything: Bool) -> [Transfer] {
        var taken = cancellations
        cancellations.removeAll()
        guard everything || !taken.isEmpty else { return taken }
        if everything {
            taken += line[head...].sorted { $0.sequence < $1.sequence }.map(\.transfer)
            gathering = nil
        }
        var kept: [Waiting] = []
        for entry in line[head...] {
            if everything || entry.transfer.isCancelled {
                if !everything { taken.append(entry.transfer) }
                hosts[entry.host].waiting -= 1
                forgetIfIdle(entry.host)
            } else {
                kept.append(entry)
            }
        }
        line = kept
        head = 0
        return taken
    }

    /// The transfers that may start at `now`, most urgent first, within the connection limits,
    /// counted as running. While a gathering lasts, only transfers at the top priority.
    mutating func takeStartable(now: UInt64 = 0) -> [Transfer] {
        // An ended gathering is closed first, whatever happens next (the thread waits for
        // `gatheringEnds` while it is set).
        if let ends = gatheringEnds, now >= ends { gathering = nil }
        let gathers = gathering != nil
        guard !suspended, running < maximumConnections, head < line.count,
              hosts.contains(where: { $0.waiting > 0 && $0.running < maximumConnectionsPerHost }) else { return [] }
        let changed = changes.count
        if changed != changesSeen {
            // Read after the count: a change while they are read is seen at the next choice.
            changesSeen = changed
            for index in head..<line.count { line[index].urgency = line[index].priority.urgency }
            prioritiesRead += line.count - head
            line[head...].sort { $0.precedes($1) }
        }
        var start: [Transfer] = []
        var index = head
        while running < maximumConnections, index < line.count {
            // The line is sorted: once below the top priority, nothing more may start yet.
            if gathers && line[index].urgency < Self.topUrgency { break }
            let host = line[index].host
            guard hasFreeSlot(host) else {
                index += 1
                continue
            }
            start.append(line[index].transfer)
            running += 1
            hosts[host].running += 1
            hosts[host].waiting -= 1
            if index == head {
                head += 1
                index += 1
            } else {
                line.remove(at: index)
            }
        }
        // The taken ones leave the storage now and then (and always when none waits).
        if head == line.count {
            line.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 {
            line.removeFirst(head)
            head = 0
        }
        return start
    }

    /// Counts a transfer taken by `takeStartable` as no longer running: its slot is free.
    mutating func release(_ transfer: Transfer) {
        running -= 1
        guard let host = hostNumbers[transfer.hostKey] else { return }
        hosts[host].running -= 1
        forgetIfIdle(host)
    }

    private func hasFreeSlot(_ host: Int) -> Bool {
        hosts[host].running < maximumConnectionsPerHost
    }

    private mutating func number(of hostKey: String) -> Int {
        if let known = hostNumbers[hostKey] { return known }
        let host: Int
        if let reused = freeHostNumbers.popLast() {
            host = reused
            hosts[host] = Host(key: hostKey)
        } else {
            host = hosts.count
            hosts.append(Host(key: hostKey))
        }
        hostNumbers[hostKey] = host
        return host
    }

    private mutating func forgetIfIdle(_ host: Int) {
        guard hosts[host].running <= 0, hosts[host].waiting <= 0 else { return }
        hostNumbers[hosts[host].key] = nil
        hosts[host] = Host(key: "")
        freeHostNumbers.append(host)
    }
}
