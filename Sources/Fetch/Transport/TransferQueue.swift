/// The transfers waiting for a connection slot, the count of running ones, and the cancellations
/// not yet carried out. A plain value: the transport keeps it under its lock; its thread takes work
/// from it.
///
/// Order: waiting transfers start most urgent first over all hosts (`LoadPriority`, read from each
/// transfer's `RequestPriority` at the moment of choosing, so that a priority changed while a
/// transfer waits reorders it), first in, first out among equal priorities, within
/// `maximumConnections` in all and `maximumConnectionsPerHost` per host. A host at its limit is
/// skipped: it never holds back a less urgent transfer to another host.
///
/// Cost: choosing reads each waiting transfer's priority once (one short lock each) and selects
/// the most urgent for each free slot: O(waiting × free slots). When every host with waiting
/// transfers is at its limit, or no slot is free, nothing is read at all (the common case on the
/// transport thread, which asks after every turn of its loop).
struct TransferQueue {
    /// A transfer waiting for a slot, with its place in the line (for first in, first out among
    /// equal priorities) and its host's number.
    private struct Waiting {
        let transfer: Transfer
        let sequence: UInt64
        let host: Int
    }

    /// A waiting transfer's priority as read at one choice, as one number.
    private struct Candidate {
        let index: Int
        let urgency: Int64
        let sequence: UInt64
        let host: Int

        init(index: Int, priority: LoadPriority, sequence: UInt64, host: Int) {
            self.index = index
            self.urgency = Self.urgency(of: priority)
            self.sequence = sequence
            self.host = host
        }

        /// More urgent, or as urgent and queued earlier.
        func precedes(_ other: Candidate) -> Bool {
            urgency != other.urgency ? urgency > other.urgency : sequence < other.sequence
        }

        /// Greater is more urgent, in `LoadPriority`'s order (orders beyond ±2^40, which no list
        /// has, count as ±2^40).
        static func urgency(of priority: LoadPriority) -> Int64 {
            let bound: Int64 = 1 << 40
            let order = min(max(Int64(clamping: priority.order), -bound), bound)
            return Int64(priority.tier.rawValue) * (4 * bound) - order
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
    // In no particular order: a choice reads every priority anyway; removal swaps with the last.
    private var line: [Waiting] = []
    // By number; a host with nothing running or waiting is forgotten and its number reused.
    private var hosts: [Host] = []
    private var hostNumbers: [String: Int] = [:]
    private var freeHostNumbers: [Int] = []
    private var nextSequence: UInt64 = 0
    private var cancellations: [Transfer] = []
    /// Transfers counted as running (taken by `takeStartable` and not yet released).
    private(set) var running = 0
    /// Whether nothing new may start (see `CurlTransport.suspend()`).
    var suspended = false
    /// Priorities read by choices so far: what a choice costs, for tests.
    private(set) var prioritiesRead = 0

    init(maximumConnections: Int, maximumConnectionsPerHost: Int) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }

    /// Transfers waiting for a slot.
    var waiting: Int { line.count }

    /// Puts `transfer` in the line, behind every transfer of the same priority.
    mutating func enqueue(_ transfer: Transfer) {
        let host = number(of: transfer.hostKey)
        hosts[host].waiting += 1
        line.append(Waiting(transfer: transfer, sequence: nextSequence, host: host))
        nextSequence += 1
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
        if everything {
            taken += line.sorted { $0.sequence < $1.sequence }.map(\.transfer)
            while !line.isEmpty { removeFromLine(at: line.count - 1) }
        } else if !taken.isEmpty {
            var index = line.count - 1
            while index >= 0 {
                if line[index].transfer.isCancelled {
                    taken.append(line[index].transfer)
                    removeFromLine(at: index)
                }
                index -= 1
            }
        }
        return taken
    }

    /// The transfers that may start now, most urgent first, within the connection limits,
    /// counted as running.
    mutating func takeStartable() -> [Transfer] {
        guard !suspended, running < maximumConnections, !line.isEmpty,
              hosts.contains(where: { $0.waiting > 0 && $0.running < maximumConnectionsPerHost }) else { return [] }
        var candidates: [Candidate] = []
        candidates.reserveCapacity(line.count)
        for index in line.indices where hasFreeSlot(line[index].host) {
            let waiting = line[index]
            candidates.append(Candidate(index: index, priority: waiting.transfer.priority.value,
                                        sequence: waiting.sequence, host: waiting.host))
        }
        prioritiesRead += candidates.count
        var chosen: [Int] = []
        while running < maximumConnections {
            var best: Int?
            for position in candidates.indices where hasFreeSlot(candidates[position].host) {
                if let current = best, !candidates[position].precedes(candidates[current]) { continue }
                best = position
            }
            guard let best else { break }
            let candidate = candidates[best]
            candidates.swapAt(best, candidates.count - 1)
            candidates.removeLast()
            running += 1
            hosts[candidate.host].running += 1
            chosen.append(candidate.index)
        }
        let start = chosen.map { line[$0].transfer }
        // Remove from the back, so that the swaps never move an index still to be removed.
        for index in chosen.sorted(by: >) { removeFromLine(at: index) }
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

    private mutating func removeFromLine(at index: Int) {
        let host = line[index].host
        hosts[host].waiting -= 1
        line.swapAt(index, line.count - 1)
        line.removeLast()
        forgetIfIdle(host)
    }
}
