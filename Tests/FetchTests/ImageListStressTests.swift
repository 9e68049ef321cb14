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

/// Random scrolling, reuse, gestures and network changes against the list's delivery contract.
struct ImageListStressTests {
    static let seeds: [UInt64] = [1, 2, 3]

    /// What the test's "screen" holds: the items it gave the list, and what went wrong.
    @MainActor final class Screen {
        var items: [ImageItem] = []
        var shown: [Int: (item: ImageItem, variant: Variant)] = [:]
        var violations: [String] = []
        var events = 0
    }

    /// Once `setItems` has returned on the delivery actor, no event of an old item arrives; an
    /// upgrade always replaces a thumbnail of the same item; nothing arrives after `stop()`.
    @Test(arguments: seeds)
    func randomScrollingReuseAndNetworkChangesDeliverNothingWrong(seed: UInt64) async {
        var random = SeededGenerator(seed: seed, label: "list stress")
        let clock = ManualClock()
        let scripted = ScriptedDownloader(clock: clock)
        let pool = (0..<400).map { ImageItem.named("\($0)", suffix: ".jpg") }
        for item in pool {
            scripted.script(item.original, .bytes([1]), after: .milliseconds(Int.random(in: 10...200, using: &random)))
            scripted.script(item.thumbnail!, .bytes([2]), after: .milliseconds(Int.random(in: 10...100, using: &random)))
        }
        let pipeline = ImagePipeline(downloader: scripted, disk: nil)
        let loader = ImageLoader(policy: .default, reachability: FixedReachability(NetworkState(.wifi)),
                                 settings: InMemorySettingsStore(), pipeline: pipeline)
        let screen = Screen()
        let list = ImageList(loader: loader, nearRows: 2, deliveringOn: MainActor.shared,
                             rules: ListRules(plan: { network, _ in network.kind == .wifi ? PrefetchPlan(ahead: 5, behind: 2) : PrefetchPlan(ahead: 3, variants: .thumbnails) },
                                              letsRunningLoadsFinish: { _, _ in false })) { event in
            MainActor.assumeIsolated {
                screen.events += 1
                guard event.row < screen.items.count, screen.items[event.row] == event.item else {
                    screen.violations.append("row \(event.row) got \(event.item.id ?? "") (\(event.summary))")
                    return
                }
                switch event {
                case .upgraded(let row, let item, _, let variant, _):
                    if variant != .original || screen.shown[row]?.item != item || screen.shown[row]?.variant != .thumbnail {
                        screen.violations.append("row \(row): upgrade without a thumbnail of the item shown")
                    }
                    screen.shown[row] = (item, variant)
                case .imageReady(let row, let item, _, let variant, _):
                    screen.shown[row] = (item, variant)
                case .failed(let row, let item, _, _, let fallback?):
                    screen.shown[row] = (item, fallback.url == item.thumbnail ? .thumbnail : .original)
                default:
                    break
                }
            }
        }
        let networks = [NetworkState(.wifi), NetworkState(.cellular, isExpensive: true), .offline]
        let phases: [ScrollPhase] = [.idle, .dragging, .flinging]
        await MainActor.run {
            screen.items = Array(pool[0..<100])
            list.setItems(screen.items)
        }
        var top = 0
        for _ in 0..<400 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:
                top = max(0, min(90, top + Int.random(in: -4...6, using: &random)))
                list.setVisibleRows(top..<top + 8)
            case 4:
                list.setScrollPhase(phases.randomElement(using: &random)!)
            case 5:
                let row = min(99, max(0, top + Int.random(in: -2..<10, using: &random)))   // mostly on screen or near
                let item = pool[Int.random(in: 100..<400, using: &random)]
                await MainActor.run {
                    screen.items[row] = item
                    screen.shown[row] = nil
                    list.setItems(screen.items)
                }
            case 6:
                list.networkChanged(to: networks.randomElement(using: &random)!)
            default:
                clock.advance(by: .milliseconds(Int.random(in: 5...80, using: &random)))
            }
            await Task.yield()
        }
        list.setScrollPhase(.idle)
        list.networkChanged(to: NetworkState(.wifi))
        clock.advance(by: .seconds(1))
        let atStop = await MainActor.run {
            list.stop()
            return screen.events
        }
        clock.advance(by: .seconds(10))
        #expect(await waitUntil { scripted.inFlightCount == 0 && pipeline.statistics.isIdle })
        for _ in 0..<20 { await Task.yield() }
        let (events, violations) = await MainActor.run { (screen.events, screen.violations) }
        #expect(events == atStop, "events after stop()")
        #expect(violations.isEmpty, "\(violations.prefix(5))")
        #expect(atStop > 0)
        #expect(list.statistics.loadsStarted > 0)
    }
}
