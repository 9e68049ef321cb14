import Fetch
import FetchTesting
import Policy
import Testing
import TestSupport

/// The recorder fed by a real `ImageLoader` over a real pipeline (memory and disk caches) and a
/// scripted downloader: every load counted once, under the decision's link, variant and source.
struct DataUsageRecorderTests {
    let folder = TemporaryFolder()
    let downloader = ScriptedDownloader()
    let disk: DiskCache
    let recorder = DataUsageRecorder()

    init() throws {
        disk = try DiskCache(folder: folder.path)
    }

    /// The item `name`, its original scripted as 20,000 bytes and its thumbnail as 2,000.
    func scriptedItem(_ name: String) -> ImageItem {
        let item = ImageItem.named(name, suffix: ".png")
        downloader.script(item.original, .bytes(TestImages.png(size: 20_000, seed: 1)))
        downloader.script(item.thumbnail!, .bytes(TestImages.png(size: 2_000, seed: 2)))
        return item
    }

    func loader(_ network: NetworkState, pipeline: ImagePipeline? = nil) -> ImageLoader {
        ImageLoader(policy: .default, reachability: FixedReachability(network), settings: InMemorySettingsStore(),
                    pipeline: pipeline ?? ImagePipeline(downloader: downloader, disk: disk, diskWrites: .waitWhenFull), usage: recorder)
    }

    func load(_ item: ImageItem, with loader: ImageLoader) async throws -> SlotEvent {
        await loader.load(item, decision: try loader.decide(item))
    }

    func amount(_ link: DataUsage.Link, _ variant: Variant, _ source: FetchedImage.Source) -> DataUsage.Amount? {
        recorder.usage.amounts[.init(link: link, variant: variant, source: source)]
    }

    @Test func networkMemoryAndDiskSourcesAreEachCountedOnce() async throws {
        let item = scriptedItem("a")
        let cellular = loader(NetworkState(.cellular))
        _ = try await load(item, with: cellular)                 // downloaded
        _ = try await load(item, with: cellular)                 // shown from memory
        await cellular.pipeline.flush()
        _ = try await load(item, with: loader(NetworkState(.cellular)))  // a new pipeline: from disk
        let link = DataUsage.Link(.cellular)
        #expect(amount(link, .thumbnail, .network) == .init(bytes: 2_000, transfers: 1))
        #expect(amount(link, .thumbnail, .memory) == .init(bytes: 2_000, transfers: 1))
        #expect(amount(link, .thumbnail, .disk) == .init(bytes: 2_000, transfers: 1))
        #expect(recorder.usage.amounts.count == 3)
        #expect(downloader.calls(to: item.thumbnail!) == 1)
    }

    @Test func aThumbnailOnCellularCountsAnOriginalNotDownloadedOnceAndAnOriginalOnWiFiNone() async throws {
        let item = scriptedItem("b")
        for _ in 0..<3 { _ = try await load(item, with: loader(NetworkState(.cellular))) }
        #expect(recorder.usage.originalsNotDownloaded == [DataUsage.Link(.cellular): 1])  // once per original
        let other = scriptedItem("c")
        _ = try await load(other, with: loader(NetworkState(.wifi)))
        #expect(amount(.init(.wifi), .original, .network) == .init(bytes: 20_000, transfers: 1))
        #expect(recorder.usage.originalsNotDownloaded() == 1)
        // Once the original is cached, a thumbnail decision is no saving (nothing held back).
        let wifi = loader(NetworkState(.wifi))
        _ = try await load(other, with: wifi)
        await wifi.pipeline.flush()
        var decision = try loader(NetworkState(.cellular)).decide(other)
        decision.action = .load(.thumbnail, other.thumbnail!)
        _ = await loader(NetworkState(.cellular)).load(other, decision: decision)
        #expect(recorder.usage.originalsNotDownloaded() == 1)
    }

    @Test func roamingAndExpensiveAreKeptApartAndOfflineHoldsNothingBack() async throws {
        _ = try await load(scriptedItem("d"), with: loader(NetworkState(.cellular, isRoaming: true)))
        _ = try await load(scriptedItem("e"), with: loader(NetworkState(.wifi, isExpensive: true)))
        let offline = try await load(scriptedItem("f"), with: loader(.offline))
        guard case .placeholder = offline else { Issue.record("expected the placeholder offline, got \(offline)"); return }
        let usage = recorder.usage
        #expect(usage.links == [DataUsage.Link(.wifi, isExpensive: true), DataUsage.Link(.cellular, isRoaming: true)])
        #expect(usage.originalsNotDownloaded == [DataUsage.Link(.cellular, isRoaming: true): 1])
    }

    @Test func aFailedDownloadCountsNoBytesAndAFailedOriginalIsNoSaving() async throws {
        let item = ImageItem(id: "g", original: ImageURL("http://127.0.0.1:9/missing.png")!)
        let event = try await load(item, with: loader(NetworkState(.wifi)))
        guard case .failed = event else { Issue.record("expected a failure, got \(event)"); return }
        #expect(recorder.usage.isEmpty)
    }

    @Test func observersGetTheCurrentValueThenEachChange() async throws {
        var changes = recorder.changes().makeAsyncIterator()
        #expect(try await withDeadline("the current usage") { await changes.next() } == DataUsage())
        _ = try await load(scriptedItem("h"), with: loader(NetworkState(.cellular)))
        let next = try await withDeadline("the usage after a download") { await changes.next() }
        #expect(next?.downloadedBytes() == 2_000)
        #expect(next == recorder.usage)
    }

    @Test func concurrentLoadsAreAllCounted() async throws {
        let items = (0..<100).map { scriptedItem("p\($0)") }
        let loader = loader(NetworkState(.cellular))
        await withTaskGroup(of: Void.self) { group in
            for item in items { group.addTask { _ = try? await self.load(item, with: loader) } }
        }
        #expect(recorder.usage.amount(from: .network) == .init(bytes: 200_000, transfers: 100))
        #expect(recorder.usage.originalsNotDownloaded() == 100)
        #expect(recorder.takeUnsaved() == recorder.usage)
        #expect(recorder.takeUnsaved().isEmpty)
    }
}
