import Logging
import Support
import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics

/// Writes downloads to the disk cache on a thread of its own, bounded by a `DiskWritePolicy`,
/// and remembers what failed.
///
/// - `enqueue` admits a write, drops it, or (policy `.wait`) suspends until there is room.
/// - `flush` waits for the writes admitted before it, not for a moment with nothing queued.
/// - A failed write is counted, logged at `error` with the cache's path and message, and kept
///   (the first of each distinct cause, with a count) for a tool to report. The cause is the
///   error's code and the system's reason (the text after its last ": "): a full disk makes
///   every entry's write fail with its own path but one cause, reported once.
///
/// Thread safety: every method may be called from any task at once.
final class DiskWriteQueue: Sendable {
    private struct State {
        var backlog: DiskWriteBacklog<CheckedContinuation<Int, Never>, CheckedContinuation<Void, Never>>
        /// The first failure of each distinct cause, and how many failed so.
        var failures: [(error: DiskCacheError, occurrences: Int)] = []
    }

    /// What makes two failures the same for a report: the code and the system's reason.
    static func cause(of error: DiskCacheError) -> String {
        let reason = error.message.split(separator: ": ").last.map(String.init) ?? error.message
        return "\(error.code) \(reason)"
    }

    /// The most distinct failures remembered.
    static let failureMemory = 100

    /// Stores one body (the disk cache's `store`, or a test's double).
    typealias Store = @Sendable ([UInt8], ImageURL) throws(DiskCacheError) -> Void
    /// Stores one body with its HTTP freshness (nil: none known).
    typealias FreshStore = @Sendable ([UInt8], ImageURL, HTTPFreshness?) throws(DiskCacheError) -> Void

    private let store: FreshStore
    private let entryPath: @Sendable (ImageURL) -> String
    private let logger: Logger
    /// The thread the writes run on.
    let thread: BlockingWorkPool
    // Guards the backlog and the failures remembered.
    private let state: Locked<State>

    /// A queue writing to `disk`.
    convenience init(disk: DiskCache, policy: DiskWritePolicy, logger: Logger) {
        self.init(policy: policy, logger: logger, entryPath: { disk.entryPath(for: $0) },
                  freshStore: { bytes, url, freshness throws(DiskCacheError) in
            // `no-store` is refused here (and any older entry removed): counted by the cache.
            try disk.store(bytes, for: url, freshness: freshness)
        })
    }

    /// A queue writing with `store`; `entryPath` names a URL's entry in messages.
    convenience init(policy: DiskWritePolicy, logger: Logger, entryPath: @escaping @Sendable (ImageURL) -> String, store: @escaping Store) {
        self.init(policy: policy, logger: logger, entryPath: entryPath, freshStore: { bytes, url, _ throws(DiskCacheError) in
            try store(bytes, url)
        })
    }

    /// A queue writing with `freshStore`.
    init(policy: DiskWritePolicy, logger: Logger, entryPath: @escaping @Sendable (ImageURL) -> String, freshStore: @escaping FreshStore) {
        self.store = freshStore
        self.entryPath = entryPath
        self.logger = logger
        thread = BlockingWorkPool(label: "imgpolicy.disk-writer", width: 1, logger: logger)
        state = Locked(State(backlog: DiskWriteBacklog(policy: policy)))
    }

    /// What the queue's writes did.
    struct Statistics: Equatable {
        /// Writes queued or running.
        var pending = 0
        /// Writes completed.
        var written = 0
        /// Writes that failed.
        var failed = 0
        /// Writes dropped for want of room.
        var dropped = 0
    }

    /// Writes queued or running, written, failed, dropped for want of room.
    var statistics: Statistics {
        state.withLock { Statistics(pending: $0.backlog.pending.count, written: $0.backlog.written, failed: $0.backlog.failed,
                                    dropped: $0.backlog.dropped) }
    }

    /// Loads waiting for room, flushes waiting.
    var waiting: (room: Int, flush: Int) { state.withLock { $0.backlog.waiting } }

    /// The failed writes so far, one per distinct message (the first 100 messages): the first
    /// failure with that message, and how many writes failed so.
    var failures: [(error: DiskCacheError, occurrences: Int)] { state.withLock { $0.failures } }

    /// Queues a write of `bytes` for `url` with its `freshness`; returns once it is queued (or dropped).
    func enqueue(_ bytes: [UInt8], for url: ImageURL, freshness: HTTPFreshness? = nil) async {
        let action = state.withLock { $0.backlog.offer(bytes.count) }
        let sequence: Int
        switch action {
        case .write(let admitted):
            sequence = admitted
        case .dropped:
            logger.warning("disk cache write dropped: the write queue is full", metadata: [
                "url": "\(url)", "bytes": "\(bytes.count)", "path": "\(entryPath(url))",
            ])
            return
        case .wait:
            sequence = await withCheckedContinuation { continuation in
                let admitted = state.withLock { $0.backlog.waitForRoom(continuation, bytes: bytes.count) }
                if let admitted { continuation.resume(returning: admitted) }
            }
        }
        thread.submit { [self] in
            var failure: DiskCacheError?
            do throws(DiskCacheError) {
                try store(bytes, url, freshness)
            } catch {
                failure = error
            }
            finished(sequence, failure: failure, url: url)
        }
    }

    /// Waits until every write queued before this call has ended.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { $0.backlog.flush(continuation) }
            if !waits { continuation.resume() }
        }
    }

    private func finished(_ sequence: Int, failure: DiskCacheError?, url: ImageURL) {
        let released = state.withLock { state in
            if let failure {
                if let known = state.failures.firstIndex(where: { Self.cause(of: $0.error) == Self.cause(of: failure) }) {
                    state.failures[known].occurrences += 1
                } else if state.failures.count < Self.failureMemory {
                    state.failures.append((failure, 1))
                }
            }
            return state.backlog.finished(sequence, failed: failure != nil)
        }
        if let failure {
            logger.error("disk cache write failed", metadata: [
                "url": "\(url)", "path": "\(failure.path)", "error": "\(failure.message)",
            ])
        }
        for (waiter, admitted) in released.admitted { waiter.resume(returning: admitted) }
        for waiter in released.flushed { waiter.resume() }
    }
}
