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

/// A downloader with `width` transfers at a time that starts waiting requests in priority order,
/// reading each request's `RequestPriority` when it chooses (as the transport does), and answers
/// a running request when the test calls `finish(_:)`.
final class PriorityQueueDownloader: ImageDownloading, @unchecked Sendable {
    private struct Request {
        var url: ImageURL
        var priority: RequestPriority
        var continuation: CheckedContinuation<[UInt8], any Error>?
        var isRunning = false
        var id: Int
    }

    let width: Int
    let bytes: [UInt8]
    // Guards the requests and the order they started in.
    private let lock = NSLock()
    private var requests: [Int: Request] = [:]
    private var nextID = 0
    private var started: [ImageURL] = []

    init(width: Int, bytes: [UInt8]) {
        self.width = width
        self.bytes = bytes
    }

    func download(_ url: ImageURL) async throws(FetchError) -> [UInt8] {
        try await download(url, priority: RequestPriority())
    }

    func download(_ url: ImageURL, priority: RequestPriority) async throws(FetchError) -> [UInt8] {
        let id = lock.withLock { () -> Int in
            nextID += 1
            requests[nextID] = Request(url: url, priority: priority, id: nextID)
            return nextID
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    lock.withLock { requests[id]?.continuation = continuation }
                    if Task.isCancelled { cancel(id) }
                    schedule()
                }
            } onCancel: {
                cancel(id)
            }
        } catch {
            throw FetchError(url: url, code: .cancelled)
        }
    }

    /// The URLs in the order their transfers started.
    var startOrder: [ImageURL] { lock.withLock { started } }

    /// How many requests wait (not started).
    var waitingCount: Int { lock.withLock { requests.values.filter { !$0.isRunning && $0.continuation != nil }.count } }

    /// The priority the downloader reads now for a request of `url`.
    func priority(of url: ImageURL) -> LoadPriority? {
        lock.withLock { requests.values.first { $0.url == url }?.priority }?.value
    }

    /// Answers the running request of `url`, then starts the most urgent waiting one.
    func finish(_ url: ImageURL) {
        let continuation = lock.withLock { () -> CheckedContinuation<[UInt8], any Error>? in
            guard let request = requests.values.first(where: { $0.url == url && $0.isRunning }) else { return nil }
            requests[request.id] = nil
            return request.continuation
        }
        continuation?.resume(returning: bytes)
        schedule()
    }

    private func cancel(_ id: Int) {
        let continuation = lock.withLock { requests.removeValue(forKey: id)?.continuation }
        continuation?.resume(throwing: CancellationError())
        schedule()
    }

    private func schedule() {
        lock.withLock {
            while requests.values.filter(\.isRunning).count < width {
                let waiting = requests.values.filter { !$0.isRunning && $0.continuation != nil }
                guard let next = waiting.max(by: { ($0.priority.value, -$0.id) < ($1.priority.value, -$1.id) }) else { return }
                requests[next.id]?.isRunning = true
                started.append(next.url)
            }
        }
    }
}

/// Compares two priorities then ids (for `max`).
private func < (lhs: (LoadPriority, Int), rhs: (LoadPriority, Int)) -> Bool {
    lhs.0 != rhs.0 ? lhs.0 < rhs.0 : lhs.1 < rhs.1
}

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
