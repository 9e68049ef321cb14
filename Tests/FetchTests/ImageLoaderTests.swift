import Fetch
import FetchTesting
import Foundation
import Policy
import Testing
import TestSupport

/// Fault 5: a "show cached" decision whose cached variant proves unreadable is made again with
/// the cache as it now is, and no error says "offline" unless the network is offline.
struct ImageLoaderTests {
    let folder = TemporaryFolder()
    let disk: DiskCache
    let pipeline: ImagePipeline

    init() throws {
        disk = try DiskCache(folder: folder.path)
        pipeline = ImagePipeline(downloader: ScriptedDownloader.instant, disk: disk)
    }

    func loader(_ kind: NetworkKind) -> ImageLoader {
        ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(kind)),
                    settings: InMemorySettingsStore(), pipeline: pipeline)
    }

    /// Cuts the entry for `url` short, as a crash or a full disk would leave it.
    func cutShort(_ url: ImageURL) throws {
        #expect(Glibc.truncate(disk.entryPath(for: url), 20) == 0)
    }

    enum Damage: String, CaseIterable { case truncated, removed }

    func damage(_ url: ImageURL, _ how: Damage) throws {
        switch how {
        case .truncated: try cutShort(url)
        case .removed: try FileManager.default.removeItem(atPath: disk.entryPath(for: url))
        }
    }

    @Test(arguments: Damage.allCases)
    func onWiFiAnUnreadableCachedOriginalIsDownloaded(_ how: Damage) async throws {
        let item = ImageItem.named("a", suffix: ".png")
        try disk.store([1, 2, 3], for: item.original)
        try damage(item.original, how)
        let loader = loader(.wifi)
        let decision = try loader.decide(item)
        #expect(decision.action == .showCached(.original, item.original))
        guard case .imageReady(let made, .original, let image) = await loader.load(item, decision: decision) else {
            Issue.record("expected the original from the network")
            return
        }
        #expect(made.rule == "wifi-original")
        #expect(image.source == .network && image.bytes == body(of: item.original))
    }

    @Test(arguments: Damage.allCases)
    func offlineAnUnreadableCachedOriginalFallsToTheCachedThumbnail(_ how: Damage) async throws {
        let item = ImageItem.named("b", suffix: ".png")
        try disk.store([1, 2, 3], for: item.original)
        try disk.store([4, 5, 6], for: item.thumbnail!)
        try damage(item.original, how)
        let loader = loader(.offline)
        let decision = try loader.decide(item)
        #expect(decision.action == .showCached(.original, item.original))
        guard case .imageReady(let made, .thumbnail, let image) = await loader.load(item, decision: decision) else {
            Issue.record("expected the cached thumbnail")
            return
        }
        #expect(made.rule == "offline-cached-thumbnail")
        #expect(image.source == .disk && image.bytes == [4, 5, 6])
    }

    @Test func offlineWithNothingReadableLeftItIsThePlaceholder() async throws {
        let item = ImageItem.named("c", suffix: ".png", thumbnail: false)
        try disk.store([1, 2, 3], for: item.original)
        try cutShort(item.original)
        let loader = loader(.offline)
        let decision = try loader.decide(item)
        guard case .placeholder(let made) = await loader.load(item, decision: decision) else {
            Issue.record("expected the placeholder")
            return
        }
        #expect(made.rule == "offline-placeholder")
    }

    /// 3,000 items decided "show cached" while another process clears the cache (before and
    /// during the loads): every item is shown, none fails (it used to fail as "offline" for most).
    @Test func anotherProcessClearingTheCacheNeverMakesALoadFail() async throws {
        let items = (0..<3000).map { ImageItem.named("many-\($0)", suffix: ".png", thumbnail: false) }
        for item in items { try disk.store([9], for: item.original) }
        let loader = loader(.wifi)
        let decisions = try items.map { try loader.decide($0) }
        #expect(decisions.allSatisfy { $0.rule == "original-cached" })
        // Another process: a cache of its own over the same folder.
        let other = try DiskCache(folder: folder.path)
        ignore(other.removeAll())
        let clearing = ClearingThread(other)
        let events = await withTaskGroup(of: SlotEvent.self) { group in
            for (item, decision) in zip(items, decisions) {
                group.addTask { await loader.load(item, decision: decision) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await offThePool { clearing.stop() }
        var failures: [String] = []
        for event in events {
            if case .imageReady = event { continue }
            failures.append("\(event)")
        }
        #expect(failures.isEmpty, "\(failures.count) failed, e.g. \(failures.first ?? "")")
        #expect(!events.contains { if case .failed(_, let error, _) = $0 { error.code == .offline } else { false } })
    }
}

/// Runs `removeAll()` on a cache over and over on a thread of its own until stopped.
final class ClearingThread: @unchecked Sendable {
    // Guards `stopped` and `runs`.
    private let lock = NSLock()
    private var stopped = false
    private var runs = 0
    private let done = DispatchSemaphore(value: 0)

    init(_ cache: DiskCache) {
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopped }) {
                ignore(cache.removeAll())
                lock.withLock { runs += 1 }
            }
            done.signal()
        }
    }

    /// Stops and waits for the thread; returns how many times it cleared.
    @discardableResult
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { runs }
    }
}

/// Drops a result, whatever its type (`removeAll()` returns a report, or nothing).
func ignore<T>(_ value: T) {}
