import Logging

/// A few threads of its own for work that blocks or runs long in C (disk reads and writes with
/// their checksums, decodes): the package's one pool for such work, so that it never runs on
/// Swift's cooperative pool, whose threads must not block.
///
/// Jobs start in the order they were submitted, at most `width` at once, each pool thread started
/// with `OwnedThread`. A thread ends when no job waits, so a pool keeps no thread while idle and
/// needs no shutdown. When no thread can be started (the process is at its thread limit) and
/// none of the pool's own is running, the submitting thread runs the waiting jobs itself (logged)
/// rather than leave them waiting for ever (logged once per pool, as a warning).
///
/// ```swift
/// let readers = BlockingWorkPool(label: "imgpolicy.disk-reader", width: 2)
/// let bytes = await readers.run { try? readWholeFile(path) }
/// ```
///
/// Thread safety: every method may be called from any thread or task at once.
package final class BlockingWorkPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var threads = 0
        var started = 0
        /// Whether a refused thread was logged (once per pool: a process at its thread limit
        /// would otherwise log every job).
        var refusalLogged = false

        /// The next job in order, or nil (the queue's storage then reset) when none waits.
        mutating func next() -> (@Sendable () -> Void)? {
            guard head < jobs.count else {
                jobs.removeAll(keepingCapacity: true)
                head = 0
                return nil
            }
            defer {
                head += 1
                if head > 1024 && head * 2 > jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
            }
            return jobs[head]
        }
    }

    /// The most jobs running at once.
    package let width: Int
    /// What the pool's log lines call it.
    package let label: String
    private let logger: Logger
    // Guards the jobs not started yet and the number of threads draining them.
    private let state = Locked(State())
    /// Starts a thread for the pool (a test replaces it to stand for a process out of threads).
    private let startThread: @Sendable (@escaping @Sendable () -> Void) throws(OwnedThread.StartFailure) -> Void

    /// A pool running at most `width` jobs at once (at least one); `label` names it in log lines.
    package convenience init(label: String, width: Int, logger: Logger = .disabled) {
        self.init(label: label, width: width, logger: logger) { body throws(OwnedThread.StartFailure) in
            try OwnedThread.detached(body)
        }
    }

    /// A pool whose threads `startThread` starts (for tests: one that throws stands for a process
    /// at its thread limit).
    package init(label: String, width: Int, logger: Logger = .disabled,
                 startThread: @escaping @Sendable (@escaping @Sendable () -> Void) throws(OwnedThread.StartFailure) -> Void) {
        self.width = max(1, width)
        self.label = label
        self.logger = logger
        self.startThread = startThread
    }

    /// Jobs started so far: for tests and diagnostics.
    package var jobsStarted: Int { state.withLock { $0.started } }

    /// Jobs waiting for a thread.
    package var waitingCount: Int { state.withLock { $0.jobs.count - $0.head } }

    /// Runs `job` on one of the pool's threads.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let startsThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.threads < width else { return false }
            state.threads += 1
            return true
        }
        guard startsThread else { return }
        do {
            try startThread { [self] in drain() }
        } catch {
            // Another of the pool's threads takes the job when one runs; else nothing would, and
            // this thread keeps the place it reserved and drains the queue itself.
            let (alone, firstRefusal) = state.withLock { state -> (Bool, Bool) in
                defer { state.refusalLogged = true }
                guard state.threads == 1 else {
                    state.threads -= 1
                    return (false, !state.refusalLogged)
                }
                return (true, !state.refusalLogged)
            }
            if firstRefusal {
                logger.warning("cannot start a thread for blocking work: jobs run on the threads that submit them",
                               metadata: ["pool": "\(label)", "errno": "\(error.code)"])
            }
            if alone { drain() }
        }
    }

    /// Runs `body` on one of the pool's threads and returns its result; the calling task is
    /// suspended meanwhile, its thread free for other tasks.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// A pool thread's loop: takes jobs in order until none waits.
    private func drain() {
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard let job = state.next() else {
                    state.threads -= 1
                    return nil
                }
                state.started += 1
                return job
            }
            guard let job else { return }
            job()
        }
    }
}
