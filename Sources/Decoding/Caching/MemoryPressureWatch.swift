import Support
import Logging

/// Trims a `PixelCache` when the memory still available runs low: Linux sends processes no
/// memory warning, so the watch reads a `MemoryReading` (by default the cgroup's limit, else
/// `/proc/meminfo`) every `interval` on an injected clock, and
/// - below `lowFraction` of the total (default 10 %), trims the cache to half its cost;
/// - below `criticalFraction` (default 5 %), empties it.
///
/// `check()` reads once and acts (for an app that has its own signal, and for tests);
/// `start()` polls until `stop()`.
///
/// ```swift
/// let watch = MemoryPressureWatch(cache: pixels.cache)    // MemoryReading.system, every 2 s
/// watch.start()
/// // … at exit: watch.stop()
/// ```
///
/// Thread safety: every method may be called from any thread.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public final class MemoryPressureWatch: Sendable {
    /// What a check did.
    public enum Action: Sendable, Hashable {
        /// Enough memory (or nothing readable): nothing.
        case none
        /// Low memory: the cache was trimmed to half its cost.
        case trimmed
        /// Critically low memory: the cache was emptied.
        case purged
    }

    /// The cache trimmed.
    public let cache: PixelCache
    /// Below this fraction of the total available, the cache is trimmed to half.
    public let lowFraction: Double
    /// Below this fraction, it is emptied.
    public let criticalFraction: Double
    /// How often `start()` reads.
    public let interval: Duration
    private let reading: MemoryReading
    private let clock: any Clock<Duration>
    private let logger: Logger
    // Guards the polling task.
    private let task = Locked<Task<Void, Never>?>(nil)

    /// A watch over `cache`, reading `reading` every `interval` of `clock` once started.
    public init(cache: PixelCache, reading: MemoryReading = .system, lowFraction: Double = 0.10,
                criticalFraction: Double = 0.05, interval: Duration = .seconds(2),
                clock: any Clock<Duration> = ContinuousClock(), logger: Logger = .disabled) {
        self.cache = cache
        self.reading = reading
        self.lowFraction = lowFraction
        self.criticalFraction = criticalFraction
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    /// Reads once and trims or empties the cache if memory is low.
    @discardableResult
    public func check() -> Action {
        guard let status = reading.read() else { return .none }
        let fraction = status.availableFraction
        if fraction < criticalFraction {
            logger.notice("memory critically low: pixel cache emptied", metadata: ["available": "\(status.available)", "total": "\(status.total)"])
            cache.purge()
            return .purged
        }
        if fraction < lowFraction {
            logger.info("memory low: pixel cache trimmed", metadata: ["available": "\(status.available)", "total": "\(status.total)"])
            cache.trim(toCost: cache.totalCost / 2)
            return .trimmed
        }
        return .none
    }

    /// Checks every `interval` until `stop()` (a second `start()` does nothing).
    public func start() {
        let (clock, interval) = (self.clock, self.interval)
        task.withLock { running in
            guard running == nil else { return }
            running = Task { [weak self] in
                while !Task.isCancelled {
                    do { try await clock.sleep(for: interval) } catch { return }
                    guard let self else { return }
                    check()
                }
            }
        }
    }

    /// Stops polling.
    public func stop() {
        task.withLock { running -> Task<Void, Never>? in
            defer { running = nil }
            return running
        }?.cancel()
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }
}
