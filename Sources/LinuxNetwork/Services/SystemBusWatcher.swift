import CNetlink
import CSystemBus
import Support
import Logging
import Policy

/// Listens to NetworkManager and ModemManager on the system bus (sd-bus) on a thread of its own,
/// and reports their facts whenever they change.
///
/// - The bus is the one at `address`, else `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket.
/// - Signals from the services' objects, and their names appearing or vanishing
///   (`NameOwnerChanged`), make it read the facts again: a service started later is picked up.
/// - No bus: every fact is unknown and says why; it tries again after 1 s, then 2, 4… up to 30 s
///   (never a tight loop). A lost connection does the same. Every call gives up after
///   `callTimeout`, so a hung service cannot hang it for longer. A service that runs but fails to
///   answer (one that has just taken its name and not yet made its objects) is asked again on the
///   same schedule.
///
/// Thread safety: every method may be called from any thread at once.
final class SystemBusWatcher: Sendable {
    static let threadName = "imgpolicy-dbus"
    static let networkManager = "org.freedesktop.NetworkManager"
    static let modemManager = "org.freedesktop.ModemManager1"

    private struct State: Sendable {
        var facts: ServiceFacts
        var stop = false
        var thread: OwnedThread?
    }

    // The latest facts, the stop request, the thread.
    private let state: Locked<State>
    private let firstReadLatch = Latch()
    private let endLatch = Latch()
    private let wake: WakeSignal
    private let address: String?
    private let callTimeout: Duration
    private let logger: Logger
    private let changed: @Sendable (ServiceFacts) -> Void

    /// Starts the thread; `changed` is called on it (outside any lock) with each new set of facts.
    init(address: String?, callTimeout: Duration, logger: Logger,
         changed: @escaping @Sendable (ServiceFacts) -> Void) throws(LinuxReachability.StartError) {
        self.address = address
        self.callTimeout = callTimeout
        self.logger = logger
        self.changed = changed
        wake = try WakeSignal()
        state = Locked(State(facts: .unknown("the system bus has not been asked yet")))
        let thread = try LinuxReachability.StartError.thread { [self] in run() }
        state.withLock { $0.thread = thread }
    }

    /// Returns once the first attempt to read the facts is over (successful or not).
    func firstRead() async {
        await firstReadLatch.wait()
    }

    func requestStop() {
        state.withLock { $0.stop = true }
        wake.signal()
    }

    /// Returns once the thread has ended.
    func waitForEnd() async {
        await endLatch.wait()
    }

    func join() { state.withLock { $0.thread }?.join() }

    func detach() { state.withLock { $0.thread }?.detach() }

    // MARK: - the thread

    private func run() {
        cnetlink_name_this_thread(Self.threadName)
        let dirty = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        dirty.initialize(to: 0)
        var connection: SystemBusConnection?
        var retryDelay = Duration.seconds(1)
        var nextAttempt = ContinuousClock.now
        var readRetryDelay = Duration.seconds(1)
        var nextRead: ContinuousClock.Instant?
        defer {
            connection = nil
            dirty.deallocate()
            firstReadLatch.open()
            endLatch.open()
        }
        while !state.withLock({ $0.stop }) {
            if connection == nil, ContinuousClock.now >= nextAttempt {
                do {
                    connection = try SystemBusConnection(address: address, callTimeout: callTimeout, dirty: dirty)
                    retryDelay = .seconds(1)
                    dirty.pointee = 1
                } catch {
                    publish(.unknown(error.description))
                    logger.debug("network services: no system bus, trying again", metadata: ["in": "\(retryDelay)", "why": "\(error)"])
                    nextAttempt = .now + retryDelay
                    retryDelay = min(retryDelay * 2, .seconds(30))
                    firstReadLatch.open()
                }
            }
            if let due = nextRead, ContinuousClock.now >= due {
                nextRead = nil
                dirty.pointee = 1
            }
            if let connected = connection, dirty.pointee != 0 {
                dirty.pointee = 0
                let (facts, complete) = connected.readFacts()
                publish(facts)
                firstReadLatch.open()
                if complete {
                    readRetryDelay = .seconds(1)
                    nextRead = nil
                } else if nextRead == nil {
                    nextRead = .now + readRetryDelay
                    readRetryDelay = min(readRetryDelay * 2, .seconds(30))
                }
            }
            var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            if let connected = connection?.handle {
                descriptors.append(pollfd(fd: csysbus_fd(connected), events: Int16(truncatingIfNeeded: csysbus_events(connected)), revents: 0))
                var deadline: UInt64 = .max
                if csysbus_timeout(connected, &deadline) >= 0, deadline != .max {
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
                    timeout = deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
                }
                if let due = nextRead { timeout = Self.earlier(timeout, Self.milliseconds(until: due)) }
            } else {
                timeout = Self.milliseconds(until: nextAttempt)
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0, errno != EINTR {
                logger.error("network services: poll failed, no more changes will be seen", metadata: ["errno": "\(errno)"])
                break
            }
            if descriptors[0].revents != 0 { wake.drain() }
            if let connected = connection?.handle {
                while true {
                    let processed = csysbus_process(connected)
                    if processed < 0 {
                        connection = nil
                        publish(.unknown("the system bus connection was lost: \(errnoText(-processed))"))
                        logger.warning("network services: the system bus connection was lost; trying again", metadata: ["in": "\(retryDelay)"])
                        nextAttempt = .now + retryDelay
                        retryDelay = min(retryDelay * 2, .seconds(30))
                        break
                    }
                    if processed == 0 { break }
                }
            }
        }
    }

    /// A poll timeout in milliseconds until `instant` (0 when past).
    private static func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        return left <= .zero ? 0 : Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
    }

    /// The shorter of two poll timeouts (-1: none).
    private static func earlier(_ a: Int32, _ b: Int32) -> Int32 {
        a < 0 ? b : b < 0 ? a : min(a, b)
    }

    private func publish(_ facts: ServiceFacts) {
        let isNew = state.withLock { state in
            defer { state.facts = facts }
            return state.facts != facts
        }
        if isNew {
            logger.info("network services: metered \(facts.metered), captive \(facts.captive), roaming \(facts.roaming)")
            changed(facts)
        }
    }
}
