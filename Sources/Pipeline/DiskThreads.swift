import Dispatch
import Support
import Transport
import Caching
import Accounting
import HTTPSemantics

/// A few threads for blocking disk work (reads with their checksum, writes), so that it never runs
/// on Swift's cooperative thread pool, whose threads must not block.
///
/// Jobs run in the order they were submitted, at most `width` at once, on Dispatch threads (not the
/// cooperative pool's). No thread is kept while there is nothing to do, so a pool needs no shutdown.
///
/// Thread safety: every method may be called from any thread or task at once.
final class DiskThreads: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var draining = 0
        var started = 0

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
    let width: Int
    private let queue: DispatchQueue
    // Guards the jobs not started yet and the number of threads draining them.
    private let state = Locked(State())

    /// A pool running at most `width` jobs at once; `label` names its threads' queue.
    init(label: String, width: Int) {
        self.width = max(1, width)
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Jobs started so far: for tests and diagnostics.
    var jobsStarted: Int { state.withLock { $0.started } }

    /// Runs `job` on one of the pool's threads.
    func submit(_ job: @escaping @Sendable () -> Void) {
        let startsThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.draining < width else { return false }
            state.draining += 1
            return true
        }
        if startsThread { queue.async { self.drain() } }
    }

    /// Runs `body` on one of the pool's threads and returns its result; the calling task is
    /// suspended meanwhile, its thread free for other tasks.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    private func drain() {
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard let job = state.next() else {
                    state.draining -= 1
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
