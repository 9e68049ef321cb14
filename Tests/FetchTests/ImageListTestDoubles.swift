import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import Policy
import TestSupport

/// A list over a scripted downloader, a manual clock, a reachability and settings a test drives,
/// and the events it delivered.
final class ListHarness: Sendable {
    let clock = ManualClock()
    let scripted: ScriptedDownloader
    /// The downloader the pipeline uses: `scripted` itself, which records priorities.
    var downloader: ScriptedDownloader { scripted }
    let pipeline: ImagePipeline
    let reachability: FixedReachability
    let settings = InMemorySettingsStore()
    let events = LockedList<RowEvent>()
    let list: ImageList
    let items: [ImageItem]

    /// `count` items whose originals and thumbnails answer after `originalDelay` and
    /// `thumbnailDelay` on the manual clock.
    init(count: Int = 40, network: NetworkState, nearRows: Int = 2, originalDelay: Duration = .seconds(2),
         thumbnailDelay: Duration = .seconds(1), plan: PrefetchPlan = .nothing, letsRunningLoadsFinish: Bool = false) {
        scripted = ScriptedDownloader(clock: clock)
        pipeline = ImagePipeline(downloader: scripted, disk: nil)
        reachability = FixedReachability(network)
        let items = (0..<count).map { ImageItem.named("\($0)", suffix: ".jpg") }
        self.items = items
        for item in items {
            scripted.script(item.original, .bytes(ListHarness.bytes(item.original)), after: originalDelay)
            if let thumbnail = item.thumbnail {
                scripted.script(thumbnail, .bytes(ListHarness.bytes(thumbnail)), after: thumbnailDelay)
            }
        }
        let loader = ImageLoader(policy: .default, reachability: reachability, settings: settings, pipeline: pipeline)
        let events = events
        list = ImageList(loader: loader, nearRows: nearRows, deliveringOn: MainActor.shared,
                         rules: ListRules(plan: { _, _ in plan }, letsRunningLoadsFinish: { _, _ in letsRunningLoadsFinish })) {
            events.append($0)
        }
    }

    static func bytes(_ url: ImageURL) -> [UInt8] { Array("\(url)".utf8) }

    func original(_ row: Int) -> ImageURL { items[row].original }
    func thumbnail(_ row: Int) -> ImageURL { items[row].thumbnail! }

    /// The events for `row`, in delivery order.
    func events(row: Int) -> [RowEvent] { events.values.filter { $0.row == row } }

    /// Waits until the downloader has `count` requests asleep on the clock (in flight).
    func waitForDownloads(_ count: Int) async -> Bool {
        await waitUntil { scripted.inFlightCount == count && clock.sleeperCount == count }
    }

    /// The URL of `variant` of row `row`'s item.
    func url(_ row: Int, _ variant: Variant) -> ImageURL { variant == .original ? original(row) : thumbnail(row) }

    /// Whether every row of `rows` received an event whose summary is `summary`.
    func rows(_ rows: some Sequence<Int>, got summary: String) -> Bool {
        rows.allSatisfy { row in events(row: row).contains { $0.summary == summary } }
    }
}

extension RowEvent {
    /// `imageReady thumbnail`, `upgraded original`, `placeholder`, `failed`, `decisionFailed`.
    var summary: String {
        switch self {
        case .placeholder: return "placeholder"
        case .imageReady(_, _, _, let variant, _): return "imageReady \(variant)"
        case .upgraded(_, _, _, let variant, _): return "upgraded \(variant)"
        case .failed(_, _, _, let error, let fallback): return "failed \(error.code == .cancelled ? "cancelled" : "")\(fallback == nil ? "" : " with fallback")"
        case .decisionFailed: return "decisionFailed"
        }
    }
}
