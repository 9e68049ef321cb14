import Fetch
@testable import Lists
import Policy
import Testing
import TestSupport

/// Issue 18, lists follow: a row of a ladder item shows one rung and only gets better. A wider
/// rung replaces a narrower one once it has arrived; a narrower (or equal) one never replaces a
/// wider one, whether it arrives late or a later decision (a worse network) asks for it.
struct ImageListRungTests {
    typealias Rows = ListRows<String>
    static let widths = [160, 320, 640, 1280, 2560]
    static let ladder = try! ImageLadder(template: "http://127.0.0.1:9/p.jpg?w={width}", widths: widths)
    static let item = ImageItem(id: "p", ladder: ladder)

    static func url(_ width: Int) -> ImageURL { ladder.rungs.first { $0.width == width }!.url }

    /// The delivery of the rung `width` as the list makes it from a fetched image.
    static func delivery(_ width: Int) -> Rows.Delivery {
        .image(ShownQuality(width == widths.last ? .original : .thumbnail, url: url(width), of: item))
    }

    /// Facts of the one row: a load of the rung `width` (as a rung rule decides it).
    static func facts(_ rows: Rows, loading width: Int) -> [Rows.Facts] {
        let variant: Variant = width == widths.last ? .original : .thumbnail
        let decision = Decision(action: .load(variant, url(width)), rule: "fit", reason: "r", network: rows.network,
                                rung: ladder.rungs.first { $0.width == width })
        return rows.window(plan: .nothing).map { row, priority in
            Rows.Facts(row: row, item: item, priority: priority, decision: .success(decision), variantCached: false, thumbnailCached: false)
        }
    }

    static func row() -> (Rows, generation: Int) {
        var rows = Rows(nearRows: 0, network: NetworkState(.wifi))
        _ = rows.setItems([item])
        rows.visible = 0..<1
        let actions = rows.refresh(epoch: rows.epoch, facts: facts(rows, loading: 640), context: Rows.Context(plan: .nothing, letsRunningLoadsFinish: false))
        return (rows, actions.start[0].generation)
    }

    /// 1,000 random sequences of rung deliveries: what is delivered is strictly wider each time,
    /// and every rung wider than all before it is delivered.
    @Test func deliveredRungsOnlyGetWider() {
        var random = SeededGenerator(seed: 0x1AD_0E25, label: "deliveredRungsOnlyGetWider")
        for round in 0..<1_000 {
            let made = Self.row()
            var rows = made.0
            let generation = made.generation
            let sequence = (0..<Int.random(in: 1...8, using: &random)).map { _ in Self.widths.randomElement(using: &random)! }
            var widest = 0
            for width in sequence {
                let admission = rows.admit(Self.delivery(width), row: 0, generation: generation, isLast: false)
                if width > widest {
                    #expect(admission == .deliver(upgraded: widest > 0), "round \(round): \(sequence)")
                    widest = width
                } else {
                    #expect(admission == .worse, "round \(round): \(sequence): \(width) after \(widest)")
                }
            }
        }
    }

    /// A later decision for a narrower rung (the network got worse) starts nothing while a wider
    /// rung is shown; one for a wider rung (a better network, a wider row) loads it.
    @Test func aNarrowerDecisionStartsNothingAndAWiderOneLoads() throws {
        var (rows, generation) = Self.row()
        #expect(rows.admit(Self.delivery(640), row: 0, generation: generation, isLast: true) == .deliver(upgraded: false))
        let context = Rows.Context(plan: .nothing, letsRunningLoadsFinish: false)
        rows.changed()
        let narrower = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, loading: 320), context: context)
        #expect(narrower.start.isEmpty, "a narrower rung after a wider one")
        rows.changed()
        let same = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, loading: 640), context: context)
        #expect(same.start.isEmpty)
        rows.changed()
        let wider = rows.refresh(epoch: rows.epoch, facts: Self.facts(rows, loading: 1280), context: context)
        let start = try #require(wider.start.first)
        guard case .load(let decision, _) = start.work else { Issue.record("expected a load"); return }
        #expect(decision.url == Self.url(1280))
        generation = start.generation
        #expect(rows.admit(Self.delivery(1280), row: 0, generation: generation, isLast: true) == .deliver(upgraded: true))
        #expect(rows.shown(at: 0) == .thumbnail)
    }
}
