import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Policy
import Testing
import TestSupport

/// The pipeline's side of the list's priorities: a shared load goes to the downloader at the most
/// urgent of its waiters' priorities, updated when one joins, leaves or changes its priority.
struct ImageListPipelinePriorityTests {
    static let url = ImageURL("http://127.0.0.1:9/shared.jpg")!

    /// Without I/O: join, change, leave; each change comes back as an action.
    @Test func theLoadTableKeepsTheMostUrgentWaitersPriority() {
        var table = LoadTable<Int, String, LoadPriority>()
        let prefetch = RequestPriority(LoadPriority(.prefetch, order: 4))
        let near = RequestPriority(LoadPriority(.near, order: 1))
        let first = table.makeWaiter(for: Self.url, priority: prefetch.value, key: ObjectIdentifier(prefetch))
        guard case .start = table.register(first, 1) else { Issue.record("expected a start"); return }
        #expect(table.priority(of: Self.url) == LoadPriority(.prefetch, order: 4))
        let second = table.makeWaiter(for: Self.url, priority: near.value, key: ObjectIdentifier(near))
        guard case .joined(let joined?) = table.register(second, 2) else { Issue.record("expected a change"); return }
        #expect(joined.value == LoadPriority(.near, order: 1))
        #expect(table.priority(of: Self.url) == LoadPriority(.near, order: 1))
        let changed = table.reprioritize(ObjectIdentifier(prefetch), to: LoadPriority(.visible, order: 0))
        #expect(changed.map(\.value) == [LoadPriority(.visible, order: 0)])
        #expect(table.priority(of: Self.url) == LoadPriority(.visible, order: 0))
        guard case .resumeCancelled(1, cancelling: nil, let left?) = table.cancel(first) else { Issue.record("expected a change"); return }
        #expect(left.value == LoadPriority(.near, order: 1))
        #expect(left.revision > changed[0].revision)
        #expect(table.priority(of: Self.url) == LoadPriority(.near, order: 1))
    }

    /// A prefetch nobody waits for keeps its priority until a caller joins it.
    @Test func aCallerJoiningAPrefetchGivesItsPriority() async throws {
        let clock = ManualClock()
        let scripted = ScriptedDownloader(clock: clock)
        scripted.script(Self.url, .bytes([1]), after: .seconds(1))
        let downloader = scripted
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        pipeline.prefetch(Self.url, priority: LoadPriority(.prefetch, order: 7))
        #expect(await waitUntil { downloader.priority(of: Self.url) == LoadPriority(.prefetch, order: 7) })
        let priority = RequestPriority(LoadPriority(.visible, order: 2))
        let load = Task { try await pipeline.image(for: Self.url, priority: priority) }
        #expect(await waitUntil { downloader.priority(of: Self.url) == LoadPriority(.visible, order: 2) })
        pipeline.setPriority(LoadPriority(.near, order: 0), of: priority)
        #expect(downloader.priority(of: Self.url) == LoadPriority(.near, order: 0))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await load.value.bytes == [1])
        #expect(scripted.callCount == 1)
    }

    /// Through the loader, as a list uses it: two rows on the same image; the visible one leaves.
    @Test(arguments: [LoadPriority(.near, order: 0), LoadPriority(.prefetch, order: 3)])
    func theDownloaderSeesTheMostUrgentWaiter(other: LoadPriority) async {
        let clock = ManualClock()
        let scripted = ScriptedDownloader(clock: clock)
        scripted.script(Self.url, .bytes([1]), after: .seconds(1))
        let downloader = scripted
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(.wifi)),
                                 settings: InMemorySettingsStore(), pipeline: pipeline)
        let item = ImageItem(original: Self.url)
        let decision = try! loader.decide(item)
        let visible = Task { await loader.load(item, decision: decision, priority: RequestPriority(.visible)) }
        #expect(await waitUntil { downloader.priority(of: Self.url) == .visible })
        let otherLoad = Task { await loader.load(item, decision: decision, priority: RequestPriority(other)) }
        #expect(await waitUntil { pipeline.statistics.waiters == 2 })
        #expect(downloader.priority(of: Self.url) == .visible)
        visible.cancel()
        #expect(await waitUntil { downloader.priority(of: Self.url) == other })
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        guard case .imageReady = await otherLoad.value else { Issue.record("expected the image"); return }
        #expect(scripted.callCount == 1)
    }
}
