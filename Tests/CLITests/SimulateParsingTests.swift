import Policy
import Testing
@testable import Simulation
import Support

/// The pure parts of `imgpolicy simulate`: the network script, the latency range, percentiles,
/// the scroll plan, the server's bodies, and the screen's checks (each must be able to fail).
struct SimulateParsingTests {
    @Test(arguments: [
        ("cellular@0s,wifi@10s,offline@20s", "cellular@0s,wifi@10s,offline@20s"),
        ("cellular,roaming@0s,wifi,constrained@500ms", "cellular,expensive,roaming@0s,wifi,constrained@500ms"),
        ("wifi@0s", "wifi@0s"),
        ("wired@0ms,cellular@2.5s", "wired@0s,cellular@2500ms"),
    ])
    func aScriptParses(_ text: String, _ written: String) throws {
        #expect(try NetworkScript(parsing: text).description == written)
    }

    @Test(arguments: [
        ("", "every entry needs a time"),
        ("wifi", "every entry needs a time"),
        ("wifi@0s,cellular", "every entry needs a time"),
        ("wifi@1s", "the first entry must be at 0s"),
        ("wifi@0s,cellular@3s,wifi@3s", "times must increase"),
        ("wifi@0s,cellular@-1s", "is not a time"),
        ("wifi@0s,cellular@1e3s", "is not a time"),
        ("wifi@0s,cellular@nans", "is not a time"),
        ("wifi@0s,cellular@4000s", "is later than the longest script, 3600 s"),
        ("wifi@0s,cellular@10", "is not a time"),
        ("wifi,fast@0s", "is not a network state"),
    ])
    func aBadScriptSaysWhy(_ text: String, _ message: String) {
        #expect(throws: NetworkScript.Problem.self) { try NetworkScript(parsing: text) }
        do { _ = try NetworkScript(parsing: text) } catch { #expect(error.description.contains(message), "\(error)") }
    }

    @Test func theStateAtATimeIsTheLastEntryStartedByThen() throws {
        let script = try NetworkScript(parsing: "cellular@0s,offline@1s,wifi@2s")
        #expect(script.state(at: 0).kind == .cellular)
        #expect(script.state(at: 0.999).kind == .cellular)
        #expect(script.state(at: 1).kind == .offline)
        #expect(script.state(at: 99).kind == .wifi)
    }

    @Test(arguments: [("20-80", 20, 80), ("50", 50, 50), ("0-0", 0, 0), ("10000-10000", 10_000, 10_000)])
    func aLatencyRangeParses(_ text: String, _ low: Int, _ high: Int) {
        #expect(LatencyRange(parsing: text) == LatencyRange(minimum: low, maximum: high))
    }

    @Test(arguments: ["", "-", "80-20", "20-", "-20", "a-b", "1-2-3", "10001", "+5-10", "20-999999999999999999999"])
    func aBadLatencyRangeIsRefused(_ text: String) {
        #expect(LatencyRange(parsing: text) == nil)
    }

    @Test func percentilesAreNearestRank() {
        func figures(_ values: [Double]) -> [Double] {
            let summary = Percentiles(values)
            return [Double(summary.count), summary.p50, summary.p95, summary.max]
        }
        #expect(figures((1...100).reversed().map(Double.init)) == [100, 50, 95, 100])
        #expect(figures([7]) == [1, 7, 7, 7])
        #expect(figures([]) == [0, 0, 0, 0])
        // Of 10 values the 95th percentile is the 10th, the median the 5th.
        let ten = Percentiles((1...10).map(Double.init))
        #expect(ten.p50 == 5 && ten.p95 == 10)
    }

    @Test func theScrollPlanIsSeededReachesTheEndAndKeepsTheAverageSpeed() {
        let plan = ScrollPlan.make(items: 1000, visible: 10, rowsPerSecond: 20, seed: 1)
        #expect(plan == ScrollPlan.make(items: 1000, visible: 10, rowsPerSecond: 20, seed: 1))
        #expect(plan.digest != ScrollPlan.make(items: 1000, visible: 10, rowsPerSecond: 20, seed: 2).digest)
        #expect(plan.steps.last(where: { $0.firstRow != nil })?.firstRow == 990)
        #expect(plan.steps.last?.gesture == .idle)
        #expect(zip(plan.steps, plan.steps.dropFirst()).allSatisfy { $0.time <= $1.time })
        // 990 rows at 20 rows/s is 49.5 s; a seeded plan lands near it.
        #expect((40...60).contains(plan.duration), "\(plan.duration)")
        #expect(plan.gestures > 10)
        #expect(plan.steps.contains { $0.gesture == .flinging } && plan.steps.contains { $0.gesture == .dragging })
    }

    @Test func aListThatFitsOnScreenDoesNotScroll() {
        let plan = ScrollPlan.make(items: 5, visible: 10, rowsPerSecond: 20, seed: 1)
        #expect(plan.steps == [ScrollPlan.Step(time: 0, firstRow: 0, gesture: .idle)])
    }

    @Test func aBodyIsAPNGThatNamesItsPath() {
        let body = SimulationServer.body(path: "/t/12.png", size: 20_000)
        #expect(body.count == 20_000)
        #expect(Array(body.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(SimulationServer.path(in: body) == "/t/12.png")
        #expect(SimulationServer.path(in: Array(repeating: 0, count: 100)) == nil)
    }

    // MARK: - The screen's checks

    @MainActor
    static func screen() -> (Screen, [ImageItem]) {
        let items = (0..<4).map { row in
            ImageItem(id: "row-\(row)", original: ImageURL("http://127.0.0.1:9/o/\(row).png")!,
                      thumbnail: ImageURL("http://127.0.0.1:9/t/\(row).png")!)
        }
        let screen = Screen(items: items, visibleCount: 2, network: NetworkState(.cellular), start: .now)
        _ = screen.scroll(toFirst: 0)
        return (screen, items)
    }

    static func image(_ item: ImageItem, _ variant: Variant, bytesOf other: ImageItem? = nil) -> Delivery.Content {
        let source = other ?? item
        let path = "/\(variant == .original ? "o" : "t")/" + (source.id ?? "").dropFirst(4) + ".png"
        return .image(variant, url: item.url(of: variant)!, bytes: SimulationServer.body(path: path, size: 100))
    }

    @MainActor
    @Test func rightDeliveriesCountNothing() {
        let (screen, items) = Self.screen()
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .thumbnail)))
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .original)))
        screen.deliver(Delivery(target: .row(3), item: items[3], content: Self.image(items[3], .original)))   // off screen
        #expect(screen.figures.wrongSlotDeliveries == 0 && screen.figures.staleDeliveries == 0)
        #expect(screen.figures.upgrades == 1 && screen.figures.timeToVisible.count == 1 && screen.figures.offscreenEvents == 1)
    }

    @MainActor
    @Test func anotherItemsImageIsAWrongSlotDelivery() {
        let (screen, items) = Self.screen()
        screen.deliver(Delivery(target: .row(0), item: items[1], content: Self.image(items[1], .thumbnail)))
        screen.deliver(Delivery(target: .row(1), item: items[1], content: Self.image(items[1], .thumbnail, bytesOf: items[2])))
        screen.deliver(Delivery(target: .cell(0), item: items[3], content: Self.image(items[3], .original)))
        #expect(screen.figures.wrongSlotDeliveries == 3)
    }

    @MainActor
    @Test func aWorseOrLateOrCancelledEventIsStale() {
        let (screen, items) = Self.screen()
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .original)))
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .thumbnail)))
        screen.deliver(Delivery(target: .row(0), item: items[0], content: .placeholder))
        screen.deliver(Delivery(target: .row(1), item: items[1], content: .failed(cancelled: true, error: nil, fallback: nil)))
        screen.stop()
        screen.deliver(Delivery(target: .row(1), item: items[1], content: Self.image(items[1], .thumbnail)))
        #expect(screen.figures.staleDeliveries == 4)
    }

    /// Issue 17: the first screen is the rows on screen at the start, each timed at its first
    /// image only; a row that leaves first is counted, and rows shown later are not part of it.
    @MainActor
    @Test func theFirstScreenIsTheRowsOnScreenAtTheStart() {
        let (screen, items) = Self.screen()
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .thumbnail), fromNetwork: true))
        screen.deliver(Delivery(target: .row(0), item: items[0], content: Self.image(items[0], .original), fromNetwork: true))
        _ = screen.scroll(toFirst: 2)   // row 1 leaves without an image
        screen.deliver(Delivery(target: .row(2), item: items[2], content: Self.image(items[2], .thumbnail), fromNetwork: true))
        #expect(screen.figures.firstScreen.count == 1 && screen.figures.firstScreenBeyondLatency.count == 1)
        #expect(screen.figures.firstScreenLeftWithoutImage == 1)
        #expect(screen.figures.timeToVisible.count == 2)
    }
}
