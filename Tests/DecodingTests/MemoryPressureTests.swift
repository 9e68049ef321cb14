import FetchTesting
import Support
import Testing
import TestSupport
@testable import Decoding

/// The pixel cache under memory pressure: the app's own purge and trim, and the watch that reads
/// the memory available (injected readings, an injected clock; no sleeps).
@Suite struct MemoryPressureTests {
    static func image(_ side: Int) -> DecodedImage {
        DecodedImage(width: side, height: side, bytesPerRow: side * 4, pixels: [UInt8](repeating: 7, count: side * side * 4))
    }

    /// A cache holding four 10×10 images (400 bytes each), "0" the least recently used.
    static func filledCache() -> PixelCache {
        let cache = PixelCache(costLimit: 10_000)
        for i in 0..<4 { cache.insert(image(10), for: .init(url: "\(i)", size: nil)) }
        return cache
    }

    @Test func trimEvictsTheLeastRecentlyUsedDownToTheCost() {
        let cache = Self.filledCache()
        _ = cache.image(for: .init(url: "0", size: nil))     // "0" is now the most recent
        cache.trim(toCost: 800)
        #expect(cache.totalCost == 800)
        #expect(cache.image(for: .init(url: "0", size: nil)) != nil)
        #expect(cache.image(for: .init(url: "3", size: nil)) != nil)
        #expect(cache.image(for: .init(url: "1", size: nil)) == nil)
        cache.trim(toCost: 0)
        #expect(cache.count == 0)
    }

    /// (available, total) → what the watch does, with the defaults (10 % low, 5 % critical).
    @Test(arguments: [
        (500, 1000, MemoryPressureWatch.Action.none, 1600),
        (100, 1000, .none, 1600),
        (99, 1000, .trimmed, 800),
        (49, 1000, .purged, 0),
        (0, 0, .purged, 0),
    ])
    func theWatchTrimsWhenMemoryRunsLow(available: Int, total: Int, action: MemoryPressureWatch.Action, cost: Int) {
        let cache = Self.filledCache()
        let watch = MemoryPressureWatch(cache: cache, reading: .constant(MemoryStatus(available: available, total: total)))
        #expect(watch.check() == action)
        #expect(cache.totalCost == cost)
    }

    @Test func nothingReadableDoesNothing() {
        let cache = Self.filledCache()
        #expect(MemoryPressureWatch(cache: cache, reading: .constant(nil)).check() == .none)
        #expect(cache.totalCost == 1600)
    }

    @Test func theStartedWatchReadsEveryIntervalOfItsClock() async {
        let cache = Self.filledCache()
        let status = Locked(MemoryStatus(available: 900, total: 1000))
        let reads = Locked(0)
        let clock = ManualClock()
        let watch = MemoryPressureWatch(cache: cache, reading: MemoryReading {
            reads.withLock { $0 += 1 }
            return status.withLock { $0 }
        }, interval: .seconds(2), clock: clock)
        watch.start()
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(await waitUntil { reads.withLock { $0 } == 1 })
        #expect(cache.totalCost == 1600)
        status.withLock { $0.available = 80 }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(await waitUntil { cache.totalCost == 800 })
        watch.stop()
    }

    @Test func meminfoIsParsed() {
        let text = "MemTotal:       16318480 kB\nMemFree:          512000 kB\nMemAvailable:    1631848 kB\n"
        #expect(MemoryStatus(meminfo: text) == MemoryStatus(available: 1_631_848 * 1024, total: 16_318_480 * 1024))
        #expect(MemoryStatus(meminfo: "MemTotal: 100 kB\n") == nil)
        #expect(MemoryStatus(meminfo: "MemTotal: 99999999999999999999 kB\nMemAvailable: 1 kB") == nil)
        #expect(MemoryStatus(meminfo: "garbage\u{0}\n::\n") == nil)
    }

    @Test func aCgroupLimitIsParsedAndMaxMeansNone() {
        #expect(MemoryStatus(cgroupMax: "1073741824\n", current: "1000000000\n") == MemoryStatus(available: 73_741_824, total: 1_073_741_824))
        #expect(MemoryStatus(cgroupMax: "max\n", current: "5\n") == nil)
        #expect(MemoryStatus(cgroupMax: "100", current: "200") == MemoryStatus(available: 0, total: 100))
        #expect(MemoryStatus.cgroupFolder("0::/user.slice/app.scope\n") == "/sys/fs/cgroup/user.slice/app.scope")
        #expect(MemoryStatus.cgroupFolder("0::/\n") == "/sys/fs/cgroup")
        #expect(MemoryStatus.cgroupFolder("0::/../etc\n") == nil)
        #expect(MemoryStatus.cgroupFolder("1:name=systemd:/x\n") == nil)
    }

    @Test func theSystemReadingReadsThisMachine() throws {
        let status = try #require(MemoryReading.system.read())
        #expect(status.total > 0 && status.available >= 0 && status.available <= status.total)
    }
}
