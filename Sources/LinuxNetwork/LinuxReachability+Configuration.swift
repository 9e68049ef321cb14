import Support
import Policy

extension LinuxReachability {
    /// Where to read the interfaces, and how events are debounced.
    public struct Configuration: Sendable, Hashable {
        /// What is read after each settled burst (default: sysfs under `/` and the kernel's route).
        public var detector: NetworkDetector
        /// How long a burst of netlink messages must be quiet before the state is looked at again
        /// (default 50 ms: a changed state reaches consumers within about 50 ms of the change that
        /// settles it).
        public var quietPeriod: Duration
        /// The longest a never-ending burst (a link flapping for minutes) can delay a look
        /// (default 500 ms).
        public var maximumDelay: Duration
        /// The netlink socket's receive buffer in bytes (default 1 MiB); a burst larger than it is
        /// an overrun, which costs one more look, never a missed change.
        public var receiveBufferSize: Int
        /// Whether to ask NetworkManager (metered, captive) and ModemManager (roaming) over the
        /// system bus (default true).
        public var watchesSystemBus: Bool
        /// The system bus's address; nil (the default) for `DBUS_SYSTEM_BUS_ADDRESS`, else
        /// `unix:path=/run/dbus/system_bus_socket`.
        public var systemBusAddress: String?
        /// How long one call to a service may take before its fact is unknown (default 1 s).
        public var busCallTimeout: Duration

        /// Creates a configuration; every parameter has the default described above.
        public init(detector: NetworkDetector = NetworkDetector(), quietPeriod: Duration = .milliseconds(50),
                    maximumDelay: Duration = .milliseconds(500), receiveBufferSize: Int = 1 << 20,
                    watchesSystemBus: Bool = true, systemBusAddress: String? = nil, busCallTimeout: Duration = .seconds(1)) {
            self.detector = detector
            self.quietPeriod = quietPeriod
            self.maximumDelay = maximumDelay
            self.receiveBufferSize = receiveBufferSize
            self.watchesSystemBus = watchesSystemBus
            self.systemBusAddress = systemBusAddress
            self.busCallTimeout = busCallTimeout
        }

        /// The defaults: the real system and its bus, 50 ms quiet, 500 ms at most.
        public static let standard = Configuration()
    }

    /// Counters of what the provider did, for tests and `imgpolicy network`.
    public struct Activity: Sendable, Hashable {
        /// Netlink datagrams read.
        public var datagrams = 0
        /// Link, address and route messages in them.
        public var messages = 0
        /// Times the kernel dropped messages because the socket's buffer was full.
        public var overruns = 0
        /// Detections made (the first one included).
        public var detections = 0
        /// Changed states published.
        public var published = 0

        /// No activity.
        public init() {}
    }

    /// The provider could not start listening.
    public struct StartError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What failed: `netlink route socket`, `eventfd`, `pthread_create`.
        public var operation: String
        /// The `errno` (or the returned code).
        public var code: Int32

        /// Creates the error.
        public init(operation: String, code: Int32) {
            self.operation = operation
            self.code = code
        }

        /// One line: what failed and the system's words for why.
        public var description: String {
            "cannot watch the network: \(operation) failed: \(errnoText(code))"
        }
    }
}

extension LinuxReachability.StartError {
    /// Starts a thread of the provider's own running `body`.
    /// - Throws: a `StartError` for `pthread_create` when no thread can be had.
    static func thread(_ body: @escaping @Sendable () -> Void) throws(LinuxReachability.StartError) -> OwnedThread {
        do {
            return try OwnedThread(body)
        } catch {
            throw LinuxReachability.StartError(operation: "pthread_create", code: error.code)
        }
    }
}
