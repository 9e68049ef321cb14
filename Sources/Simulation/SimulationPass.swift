#if canImport(FoundationEssentials)
import FoundationEssentials
import Support
#else
import Foundation
#endif
import Policy

/// One pass of a simulation: the scroll plan and the network script played in real time against
/// a list, on the main actor, with a screen checking every delivery and the server counting
/// transfers.
@MainActor
package struct SimulationPass {
    /// What a pass measured.
    package struct Result: Sendable {
        var list: String
        package var screen: Screen.Figures
        package var server: SimulationServer.Figures
        /// How late the driver applied a step at worst (a busy main actor), in milliseconds.
        var lateByMs: Double
        var durationMs: Double
        /// The list's own counters.
        var listStatistics: String?
    }

    package let plan: ScrollPlan
    package let script: NetworkScript
    package let server: SimulationServer
    /// When the pass ends: the last step and a settling time after it.
    package let endTime: Double

    /// Plays the pass. `networkChanged` is called at each change of the script after the first
    /// (to drive the list's reachability); `decidesBetter` tells whether the policy replaces a
    /// shown variant of an item in a state.
    package func run(items: [ImageItem], visibleCount: Int, makeList: (Screen) -> SimulatedList,
             networkChanged: (NetworkState) -> Void,
             decidesBetter: @escaping (ImageItem, Int, NetworkState) -> Bool) async -> Result {
        let start = ContinuousClock.now
        server.beginPass(script: script, start: start)
        let screen = Screen(items: items, visibleCount: visibleCount, network: script.entries[0].state, start: start,
                            latency: { [server] path in server.latency(of: path) },
                            expectedBody: { [server] url in server.expectedBody(of: url) })
        let list = makeList(screen)
        enum Change { case scroll(Int), gesture(ScrollPlan.Gesture, landing: Int?), network(NetworkState) }
        var timeline: [(time: Double, change: Change)] = script.entries.dropFirst().map { ($0.time, .network($0.state)) }
        for step in plan.steps {
            if let row = step.firstRow { timeline.append((step.time, .scroll(row))) }
            if let gesture = step.gesture { timeline.append((step.time, .gesture(gesture, landing: step.landing))) }
        }
        // Stable: at equal times the network changes first, then the plan in its order.
        timeline = timeline.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        list.start(items: items)
        var lateBy = 0.0
        for (time, change) in timeline {
            let due = start + .milliseconds(Int64((time * 1000).rounded()))
            try? await Task.sleep(until: due, clock: .continuous)
            lateBy = max(lateBy, SimulationServer.seconds(ContinuousClock.now - due) * 1000)
            switch change {
            case .scroll(let first):
                let before = screen.visible
                let rows = screen.scroll(toFirst: first)
                // A cell appearing shows what the app kept for its row (delivered off screen).
                for row in rows where !before.contains(row) {
                    if let variant = list.keptVariant(row: row) { screen.showKept(variant, width: list.keptWidth(row: row), row: row) }
                }
                list.setVisibleRows(rows)
            case .gesture(let gesture, let landing):
                let rows = landing.map(screen.rows(first:))
                screen.gestureChanged(to: gesture, landing: rows)
                list.setGesture(gesture, landing: rows)
            case .network(let state):
                screen.networkChanged(to: state) { item, rank in decidesBetter(item, rank, state) }
                networkChanged(state)
            }
        }
        try? await Task.sleep(until: start + .milliseconds(Int64((endTime * 1000).rounded())), clock: .continuous)
        await list.stop()
        // The list promised silence: whatever still reaches the screen now is counted as stale.
        screen.stop()
        try? await Task.sleep(for: .milliseconds(100))
        let duration = SimulationServer.seconds(ContinuousClock.now - start) * 1000
        return Result(list: list.name, screen: screen.figures, server: server.figures, lateByMs: lateBy, durationMs: duration,
                      listStatistics: list.statistics)
    }
}
