import CNetlink
import Support
import Logging
import Policy

/// The thread behind `LinuxReachability`: it blocks in `poll` on a netlink route socket and a
/// wake signal, tells the debouncer of each change message, detects again when the debouncer says
/// a burst is over, stores the result and publishes a changed state to the open streams.
///
/// All blocking I/O (netlink reads, the sysfs reads of a detection) happens on this thread, never
/// on the cooperative pool. The thread owns the netlink socket and closes it when it ends.
///
/// Thread safety: every method may be called from any thread at once; mutable state is in `state`.
final class NetworkEventLoop: Sendable {
    struct Commands: Sendable {
        var detect = false
        var republish = false
        var stop = false
    }

    struct State: Sendable {
        var detection: NetworkDetection
        var facts: ServiceFacts
        /// The detected state with the services' facts, always combined from `detection` and
        /// `facts` as they are now (under the same lock): what `currentState` reads.
        var current: NetworkState
        /// The last state yielded to the streams (the loop thread catches up with `current`).
        var published: NetworkState
        var activity = LinuxReachability.Activity()
        var continuations: [Int: AsyncStream<NetworkState>.Continuation] = [:]
        /// The streams of snapshots (`snapshotChanges()`), and the last snapshot yielded to them.
        var snapshotContinuations: [Int: AsyncStream<NetworkSnapshot>.Continuation] = [:]
        var publishedSnapshot: NetworkSnapshot?
        var nextID = 0
        var ended = false
        var thread: OwnedThread?
    }

    /// The loop thread's name, as `/proc/self/task/*/comm` shows it.
    static let threadName = "imgpolicy-net"

    // The latest detection, the open streams, counters, the thread's handle and life.
    let state: Locked<State>
    // What other threads ask the loop to do; read by the loop after a wake-up.
    let commands: Locked<Commands>
    let wake: WakeSignal
    let socket: Int32
    let detector: NetworkDetector
    let debouncer: any MessageDebouncing
    let logger: Logger
    /// Opens when the thread has ended.
    let endLatch = Latch()

    /// Opens the socket, detects once, and starts the thread.
    init(configuration: LinuxReachability.Configuration, clock: any Clock<Duration>, logger: Logger) throws(LinuxReachability.StartError) {
        let wake = try WakeSignal()
        let socket = cnetlink_open_route_socket(cnetlink_route_groups(), Int32(clamping: configuration.receiveBufferSize))
        guard socket >= 0 else { throw LinuxReachability.StartError(operation: "netlink route socket", code: errno) }
        let commands = Locked(Commands())
        self.wake = wake
        self.socket = socket
        self.commands = commands
        self.logger = logger
        detector = configuration.detector
        debouncer = makeDebouncer(
            clock: clock, quietPeriod: configuration.quietPeriod, maximumDelay: configuration.maximumDelay
        ) {
            commands.withLock { $0.detect = true }
            wake.signal()
        }
        // Subscribed before the first detection: no change can fall between the two.
        let first = detector.detect()
        let facts = ServiceFacts.unknown(configuration.watchesSystemBus ? "the system bus has not been asked yet"
                                                                         : "not asked (the configuration leaves the system bus out)")
        let combined = LinuxReachability.combine(first.state, facts)
        state = Locked(State(detection: first, facts: facts, current: combined, published: combined))
        var activity = LinuxReachability.Activity()
        activity.detections = 1
        state.withLock { $0.activity = activity }
        logger.debug("network: \(first.state)", metadata: ["reasons": "\(first.reasons.joined(separator: "; "))"])

        do {
            // The thread holds the loop until it ends.
            let thread = try LinuxReachability.StartError.thread { [self] in run() }
            state.withLock { $0.thread = thread }
        } catch {
            close(socket)
            throw error
        }
    }

    // MARK: - reading

    var currentState: NetworkState { state.withLock { $0.current } }

    var facts: ServiceFacts { state.withLock { $0.facts } }

    var detection: NetworkDetection { state.withLock { $0.detection } }

    /// The detection, the facts and the state combined from them, read at once.
    var snapshot: NetworkSnapshot { state.withLock { NetworkSnapshot(detection: $0.detection, facts: $0.facts) } }

    var activity: LinuxReachability.Activity { state.withLock { $0.activity } }

    func stateChanges() -> AsyncStream<NetworkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkState.self, bufferingPolicy: .bufferingNewest(16))
        let id: Int? = state.withLock { state in
            continuation.yield(state.published)
            guard !state.ended else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// The snapshot now, then each new one: what `snapshotChanges()` of `LinuxReachability` returns.
    func snapshotChanges() -> AsyncStream<NetworkSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkSnapshot.self, bufferingPolicy: .bufferingNewest(16))
        let id: Int? = state.withLock { state in
            let snapshot = NetworkSnapshot(detection: state.detection, facts: state.facts)
            continuation.yield(snapshot)
            guard !state.ended else { return nil }
            state.publishedSnapshot = state.publishedSnapshot ?? snapshot
            let id = state.nextID
            state.nextID += 1
            state.snapshotContinuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.snapshotContinuations.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: - life

    /// The services said something new: the thread publishes the combined state if it changed.
    func factsChanged(_ facts: ServiceFacts) {
        state.withLock { state in
            state.facts = facts
            state.current = LinuxReachability.combine(state.detection.state, facts)
        }
        commands.withLock { $0.republish = true }
        wake.signal()
    }

    /// Asks the thread to end (it finishes the streams and closes the socket).
    func requestStop() {
        commands.withLock { $0.stop = true }
        wake.signal()
    }

    /// Returns once the thread has ended.
    func waitForEnd() async {
        await endLatch.wait()
    }

    /// Waits for the thread to end (blocking); at most once.
    func join() {
        state.withLock { $0.thread }?.join()
    }

    /// Lets the thread end on its own (the provider was dropped without a shutdown).
    func detach() {
        state.withLock { $0.thread }?.detach()
    }

    var hasEnded: Bool { state.withLock { $0.ended } }

    // MARK: - the thread

    private func run() {
        cnetlink_name_this_thread(Self.threadName)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        loop: while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("network events: poll failed, the state will no longer change", metadata: ["errno": "\(errno)"])
                break
            }
            if descriptors[1].revents != 0 {
                wake.drain()
                let pending = commands.withLock { commands in
                    defer {
                        commands.detect = false
                        commands.republish = false
                    }
                    return commands
                }
                if pending.stop { break loop }
                if pending.detect { detectAndPublish() } else if pending.republish { publish(detection: nil) }
            }
            if descriptors[0].revents != 0 {
                if !readMessages(into: &buffer) { break loop }
            }
        }
        end()
    }

    /// Reads every datagram waiting on the socket; false when the socket is unusable.
    private func readMessages(into buffer: inout [UInt8]) -> Bool {
        var changes = 0, datagrams = 0, overruns = 0
        var usable = true
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { break }
                if code == ENOBUFS {
                    // The kernel dropped messages: something changed that we did not read. Look again.
                    overruns += 1
                    continue
                }
                logger.error("network events: reading the netlink socket failed, the state will no longer change",
                             metadata: ["errno": "\(code)"])
                usable = false
                break
            }
            if count == 0 { break }
            datagrams += 1
            let summary = buffer.withUnsafeBytes { cnetlink_summarize($0.baseAddress, min(count, $0.count)) }
            changes += Int(summary.route_changes)
        }
        state.withLock { state in
            state.activity.datagrams += datagrams
            state.activity.messages += changes
            state.activity.overruns += overruns
        }
        if changes > 0 || overruns > 0 { debouncer.messageArrived() }
        return usable
    }

    private func detectAndPublish() {
        publish(detection: detector.detect())
    }

    /// Stores `detection` (when given), combines it with the facts, publishes a changed state,
    /// and a changed snapshot to the snapshots' streams (a detection or facts that changed, also
    /// when the state did not: the default route moving to another link of the same kind).
    private func publish(detection: NetworkDetection?) {
        typealias Listeners = (states: [AsyncStream<NetworkState>.Continuation], snapshots: [AsyncStream<NetworkSnapshot>.Continuation])
        let (combined, snapshot, listeners): (NetworkState, NetworkSnapshot, Listeners) = state.withLock { state in
            if let detection {
                state.activity.detections += 1
                state.detection = detection
            }
            let combined = LinuxReachability.combine(state.detection.state, state.facts)
            state.current = combined
            let snapshot = NetworkSnapshot(detection: state.detection, facts: state.facts)
            var listeners: Listeners = ([], [])
            if !state.snapshotContinuations.isEmpty, snapshot != state.publishedSnapshot {
                state.publishedSnapshot = snapshot
                listeners.snapshots = Array(state.snapshotContinuations.values)
            }
            guard combined != state.published else { return (combined, snapshot, listeners) }
            state.published = combined
            state.activity.published += 1
            listeners.states = Array(state.continuations.values)
            return (combined, snapshot, listeners)
        }
        if !listeners.states.isEmpty {
            logger.info("network changed: \(combined)")
        }
        for listener in listeners.states { listener.yield(combined) }
        for listener in listeners.snapshots { listener.yield(snapshot) }
    }

    private func end() {
        debouncer.stop()
        close(socket)
        let (listeners, snapshotListeners) = state.withLock { state in
            state.ended = true
            defer {
                state.continuations = [:]
                state.snapshotContinuations = [:]
            }
            return (Array(state.continuations.values), Array(state.snapshotContinuations.values))
        }
        for listener in listeners { listener.finish() }
        for listener in snapshotListeners { listener.finish() }
        endLatch.open()
    }
}
