import Dispatch
import Support


/// Starts the concurrency runtime's own machinery while file descriptors are surely free, or
/// refuses to run with one line (docs/command-inputs.md, "Too few file descriptors").
///
/// libdispatch, under Swift's concurrency on Linux, opens its epoll and event descriptors when
/// its first worker thread starts, and a timer descriptor per clock when the first timer of that
/// clock is armed; when the process has no descriptor left at that moment, it stops the process
/// with an illegal instruction (signal 4) instead of reporting an error. So, before the command
/// opens anything: at least `minimumFree` descriptors must be free (else exit 74 naming the
/// limit), and then a worker and a timer of each clock run once, so that every descriptor
/// libdispatch keeps for the life of the process is open before the command's own files,
/// sockets and threads compete for the rest. Every later failure to get a descriptor is then the
/// command's own, reported as an error.
enum ConcurrencyStart {
    /// Descriptors that must be free before the runtime starts: libdispatch's epoll, event and
    /// three timer descriptors, the reserve every later open leaves free for libdispatch
    /// (`DescriptorReserve.reserved`), and a few for the command itself.
    static let minimumFree = 16

    /// Nil when at least `minimumFree` descriptors are free, else the one-line message.
    static func descriptorShortage() -> String? {
        var probes: [Int32] = []
        defer { for probe in probes { close(probe) } }
        while probes.count < minimumFree {
            let probe = fcntl(2, F_DUPFD_CLOEXEC, 3)
            guard probe >= 0 else { break }
            probes.append(probe)
        }
        guard probes.count < minimumFree else { return nil }
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        let shown = getrlimit(resource, &limit) == 0 && limit.rlim_cur < 1 << 31 ? "\(limit.rlim_cur)" : "unknown"
        return "too few file descriptors: \(probes.count) free under a limit of \(shown); imgpolicy needs at least "
            + "\(minimumFree) free to start (raise the limit, e.g. ulimit -n 256)"
    }

    /// Threads that must be able to run at once before the runtime starts: libdispatch's manager
    /// and workers, the transport's, the disk cache's, the network watchers'. libdispatch, when
    /// the system refuses it a thread (`ulimit -u`, a memory limit too low for a stack), waits and
    /// tries again for ever: every command would hang.
    static let minimumThreads = 8

    /// Nil when `minimumThreads` threads can run at once (each is started, then all end), else
    /// the one-line message.
    static func threadShortage() -> String? {
        let release = DispatchSemaphore(value: 0)
        var threads: [OwnedThread] = []
        var failure: OwnedThread.StartFailure?
        while threads.count < minimumThreads {
            do {
                threads.append(try OwnedThread { release.wait() })
            } catch {
                failure = error
                break
            }
        }
        for _ in threads { release.signal() }
        for thread in threads { thread.join() }
        guard let failure else { return nil }
        return "too few threads: only \(threads.count) could run at once (\(errnoText(failure.code).lowercased())); "
            + "imgpolicy needs at least \(minimumThreads) to start (raise the limit, e.g. ulimit -u, or the memory limit)"
    }

    /// Runs a worker of the global queue and a timer on the uptime and wall clocks, and waits for
    /// them: libdispatch's descriptors are open when it returns. (The continuous clock's timer is
    /// armed by the first asynchronous step, `warmContinuousClock()`.)
    static func openDispatchDescriptors() {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(200)) { done.signal() }
        done.wait()
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .microseconds(200)) { done.signal() }
        done.wait()
    }

    /// Arms a timer on the continuous and the suspending clock once (Swift's `Task.sleep` uses them).
    static func warmClocks() async {
        try? await Task.sleep(for: .microseconds(200), clock: .continuous)
        try? await Task.sleep(for: .microseconds(200), clock: .suspending)
    }
}
