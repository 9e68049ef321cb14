import Transport
import Caching
import Accounting
import HTTPSemantics
import Support
/// The bookkeeping of the pipeline's disk-write queue: which writes are admitted, dropped or must
/// wait for room, and which `flush` calls may return. A value that returns what to do, tested
/// without I/O; `DiskWriteQueue` keeps it under a lock and carries the actions out.
///
/// Each admitted write gets a sequence number. A flush waits for the writes admitted before it,
/// and only those: writes admitted later never delay it, however steady the traffic.
struct DiskWriteBacklog<RoomWaiter, FlushWaiter> {
    /// The bound and what a full queue does.
    let policy: DiskWritePolicy

    private(set) var pending: [Int: Int] = [:]   // sequence number → bytes
    private(set) var pendingBytes = 0
    private var lastSequence = 0
    private var roomWaiters: [(waiter: RoomWaiter, bytes: Int)] = []
    private var flushWaiters: [(waiter: FlushWaiter, through: Int)] = []
    /// Writes finished, failed, and dropped for want of room.
    private(set) var written = 0, failed = 0, dropped = 0

    init(policy: DiskWritePolicy) {
        self.policy = policy
    }

    /// Loads waiting for room, and flushes waiting.
    var waiting: (room: Int, flush: Int) { (roomWaiters.count, flushWaiters.count) }

    private func hasRoom(for bytes: Int) -> Bool {
        pending.isEmpty || (pending.count < policy.maxPendingWrites && pendingBytes + bytes <= policy.maxPendingBytes)
    }

    private mutating func admit(_ bytes: Int) -> Int {
        lastSequence += 1
        pending[lastSequence] = bytes
        pendingBytes += bytes
        return lastSequence
    }

    /// What to do with a write.
    enum OfferAction: Equatable {
        /// Run the write; report its end with `finished(_:failed:)`.
        case write(sequence: Int)
        /// The queue is full: the write is dropped (and counted).
        case dropped
        /// The queue is full: call `waitForRoom`.
        case wait
    }

    /// A write of `bytes` bytes wants in.
    mutating func offer(_ bytes: Int) -> OfferAction {
        // Waiters first: a newcomer does not overtake a load already waiting.
        if roomWaiters.isEmpty && hasRoom(for: bytes) { return .write(sequence: admit(bytes)) }
        switch policy.whenFull {
        case .drop:
            dropped += 1
            return .dropped
        case .wait:
            return .wait
        }
    }

    /// Parks a write that got `.wait`; `finished` admits it when there is room. Returns its
    /// sequence number when there is room already (a write finished in between).
    mutating func waitForRoom(_ waiter: RoomWaiter, bytes: Int) -> Int? {
        if roomWaiters.isEmpty && hasRoom(for: bytes) { return admit(bytes) }
        roomWaiters.append((waiter, bytes))
        return nil
    }

    /// What a finished write lets go on.
    struct Released {
        /// Parked writes now admitted, each with its sequence number: resume them.
        var admitted: [(waiter: RoomWaiter, sequence: Int)] = []
        /// Flushes whose writes are all done: resume them.
        var flushed: [FlushWaiter] = []
    }

    /// Write `sequence` ended (`failed`: it could not be stored).
    mutating func finished(_ sequence: Int, failed didFail: Bool) -> Released {
        guard let bytes = pending.removeValue(forKey: sequence) else { return Released() }
        pendingBytes -= bytes
        if didFail { failed += 1 } else { written += 1 }
        var released = Released()
        while let next = roomWaiters.first, hasRoom(for: next.bytes) {
            roomWaiters.removeFirst()
            released.admitted.append((next.waiter, admit(next.bytes)))
        }
        let oldest = pending.keys.min() ?? Int.max
        flushWaiters.removeAll { entry in
            guard entry.through < oldest else { return false }
            released.flushed.append(entry.waiter)
            return true
        }
        return released
    }

    /// A flush wants to wait for every write admitted so far: false when they are all done
    /// already (return at once), else the waiter is kept until they are.
    mutating func flush(_ waiter: FlushWaiter) -> Bool {
        guard let oldest = pending.keys.min(), oldest <= lastSequence else { return false }
        flushWaiters.append((waiter, lastSequence))
        return true
    }
}
