import Logging
import Policy
import Support

/// The network state on Linux, kept fresh by the kernel's netlink route events: no polling, and
/// no system call when the state is read.
///
/// A netlink route socket joined to the link, IPv4/IPv6 address and route groups wakes a thread of
/// the provider's own. A burst of messages (a flapping link gives dozens) is debounced: once it
/// has been quiet for `Configuration.quietPeriod`, `NetworkDetector` looks again (sysfs and the
/// kernel's route, about half a millisecond), the result is stored, and a state that differs from
/// the previous one is published to every `stateChanges()` stream.
///
/// What sysfs cannot tell comes from the system bus, when its services run (see
/// `ServiceFacts`): NetworkManager's `Metered` makes the state expensive, its `Connectivity`
/// (portal, limited, none) captive, and ModemManager's roaming registration makes a cellular (or
/// unclassified) link roaming. Their changes are published as they are signalled; a service that
/// is missing leaves its fact unknown, and says why in `serviceFacts`.
///
/// ```swift
/// let reachability = try LinuxReachability()
/// print(reachability.currentState)                  // a stored value: a few nanoseconds
/// for await state in reachability.stateChanges() { print(state) }
/// await reachability.shutdown()
/// ```
///
/// Lifecycle: the provider holds a thread, a netlink socket and an eventfd until `shutdown()`
/// (or `syncShutdown()`), which ends the thread, closes the socket and finishes every open stream.
/// A provider dropped without a shutdown lets its thread end on its own, releasing the same; a
/// consumer that stops iterating releases its stream at once.
///
/// Thread safety: every member may be used from any thread at once.
///
/// ## See Also
///
/// - <doc:NetworkStateAndSources>
public final class LinuxReachability: ReachabilityProviding {
    private let loop: NetworkEventLoop
    private let watcher: SystemBusWatcher?
    private let logger: Logger

    /// Subscribes to netlink route events, detects the state once, and starts listening.
    ///
    /// - Parameters:
    ///   - configuration: where to read sysfs, and the debounce.
    ///   - clock: the clock the debounce sleeps on (a test clock in tests).
    ///   - logger: where failures (an unreadable socket) and changes (at `.info`) are told.
    /// - Throws: `StartError` when the socket, the eventfd or the thread cannot be made (netlink
    ///   forbidden by a sandbox, descriptors exhausted).
    public init(configuration: Configuration = .standard, clock: any Clock<Duration> = ContinuousClock(),
                logger: Logger = Logger(label: "imgpolicy.network", factory: { _ in SwiftLogNoOpLogHandler() })) throws(StartError) {
        let loop = try NetworkEventLoop(configuration: configuration, clock: clock, logger: logger)
        self.loop = loop
        self.logger = logger
        if configuration.watchesSystemBus {
            do {
                watcher = try SystemBusWatcher(address: configuration.systemBusAddress, callTimeout: configuration.busCallTimeout,
                                               logger: logger) { [weak loop] facts in loop?.factsChanged(facts) }
            } catch {
                loop.requestStop()
                loop.join()
                throw error
            }
        } else {
            watcher = nil
        }
    }

    deinit {
        if !loop.hasEnded {
            logger.debug("LinuxReachability dropped without shutdown(): its threads end on their own")
        }
        watcher?.requestStop()
        watcher?.detach()
        loop.requestStop()
        loop.detach()
    }

    /// The network state after the latest settled change: a stored value, no system call.
    public var currentState: NetworkState { loop.currentState }

    /// The latest detection with its reasons (for `imgpolicy network`).
    public var detection: NetworkDetection { loop.detection }

    /// The latest detection, the latest facts and the state combined from them, read at once
    /// (reading `detection`, `serviceFacts` and `currentState` one by one may straddle a change).
    public var snapshot: NetworkSnapshot { loop.snapshot }

    /// What NetworkManager and ModemManager said last, each fact with its source or why it is
    /// unknown.
    public var serviceFacts: ServiceFacts { loop.facts }

    /// Returns once the system bus has been asked once (at once when the configuration leaves
    /// it out): what `imgpolicy network` waits for before it prints.
    public func servicesAsked() async {
        await watcher?.firstRead()
    }

    /// What the provider has done so far: messages read, detections made, changes published.
    public var activity: Activity { loop.activity }

    /// The state now, then each change (see `ReachabilityProviding`). After a shutdown the stream
    /// yields the last state and finishes.
    public func stateChanges() -> AsyncStream<NetworkState> { loop.stateChanges() }

    /// The snapshot now, then each new one: a detection or services' facts that changed, also when
    /// the state they combine to did not (the default route moving from `eth0` to `eth1`, both
    /// wired; what `imgpolicy network --watch` reports). Like `stateChanges()`, the newest 16 are
    /// kept for a slow consumer; after a shutdown the stream yields the last snapshot and finishes.
    ///
    /// ```swift
    /// for await snapshot in reachability.snapshotChanges() {
    ///     print(snapshot.state, snapshot.detection.interface?.name ?? "none")
    /// }
    /// ```
    public func snapshotChanges() -> AsyncStream<NetworkSnapshot> { loop.snapshotChanges() }

    /// Ends the thread, closes the socket and finishes every stream; returns when all is done.
    /// Calling it again does nothing.
    public func shutdown() async {
        watcher?.requestStop()
        loop.requestStop()
        await watcher?.waitForEnd()
        await loop.waitForEnd()
        watcher?.join()
        loop.join()
    }

    /// `shutdown()` for synchronous code: blocks until the thread has ended.
    @available(*, noasync, message: "use await shutdown()")
    public func syncShutdown() {
        watcher?.requestStop()
        loop.requestStop()
        watcher?.join()
        loop.join()
    }
}

extension LinuxReachability {
    /// The detected state with the services' facts: metered makes it expensive, captive captive,
    /// and roaming makes a cellular or unclassified link roaming (a roaming modem that carries no
    /// traffic, behind Wi-Fi, costs nothing). Offline stays offline.
    public static func combine(_ detected: NetworkState, _ facts: ServiceFacts) -> NetworkState {
        var state = detected
        guard state.kind != .offline else { return state }
        if facts.metered.value == true { state.isExpensive = true }
        if facts.captive.value == true { state.isCaptive = true }
        if facts.roaming.value == true, state.kind == .cellular || state.kind == .unknown {
            state.isRoaming = true
            state.isExpensive = true
        }
        return state
    }
}
