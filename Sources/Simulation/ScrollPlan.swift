#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Support

/// How a user scrolls a list in a simulation, decided up front from the seed: when the first
/// visible row changes, and when the gesture changes (dragging, flinging, idle).
///
/// The model (docs/simulate.md): the user reads, then scrolls with one gesture, again and again.
/// - **Reading**: idle for 0.5–1.5 s (uniform; 1 s on average).
/// - **Drag**: 0.25 s at constant speed, covering 15 % of the gesture's distance.
/// - **Fling**: the rest, at a speed decaying as UIScrollView's normal deceleration does
///   (`v(t) = v₀·e^(−t/τ)`, τ = 0.5 s), until it falls under 2 rows/s: then the list settles.
/// - **Distance**: uniform from 0.5 to 1.5 times a mean chosen so that the net speed over the
///   run is the `--rows-per-second` asked; 12 % of gestures go back up, 0.3 times as far
///   (the user looks again at something passed).
/// The list starts at the top, idle; the plan ends when the last row is on screen.
package struct ScrollPlan: Sendable, Equatable {
    /// What the user's finger is doing.
    package enum Gesture: String, Sendable, Equatable {
        case idle, dragging, flinging
    }

    /// One change: the first visible row, or the gesture, at a time (seconds from the start).
    package struct Step: Sendable, Equatable {
        var time: Double
        var firstRow: Int?
        var gesture: Gesture?
        /// For a fling: the first visible row where it stops (what UIKit reports in
        /// `scrollViewWillEndDragging(_:withVelocity:targetContentOffset:)`).
        var landing: Int?
    }

    package var steps: [Step]
    /// When the last step happens.
    package var duration: Double
    /// How many gestures (drag and fling) the user made.
    package var gestures: Int

    package static let dragTime = 0.25
    package static let dragShare = 0.15
    package static let tau = 0.5
    package static let settleSpeed = 2.0
    package static let backwardShare = 0.12
    package static let backwardDistance = 0.3
    package static let tick = 1.0 / 240

    /// The plan for `items` rows, `visible` on screen at once, at `rowsPerSecond` on average.
    package static func make(items: Int, visible: Int, rowsPerSecond: Double, seed: UInt64) -> ScrollPlan {
        let lastFirst = max(0, items - visible)
        var steps = [Step(time: 0, firstRow: 0, gesture: .idle)]
        guard lastFirst > 0 else { return ScrollPlan(steps: steps, duration: 0, gestures: 0) }
        var random = SimulationRandom(seed: seed, purpose: "scroll")
        let mean = meanDistance(rowsPerSecond: rowsPerSecond)
        var time = 0.0, position = 0.0, first = 0, gestures = 0
        func move(to newPosition: Double) -> Bool {
            position = min(Double(lastFirst), max(0, newPosition))
            let row = Int(position)
            if row != first {
                first = row
                steps.append(Step(time: time, firstRow: row))
            }
            return (newPosition >= Double(lastFirst) && row == lastFirst) || (newPosition <= 0 && position == 0)
        }
        while first < lastFirst {
            time += random.uniform(0.5...1.5)
            gestures += 1
            let backward = position > 0 && random.uniform(0...1) < backwardShare
            let distance = mean * random.uniform(0.5...1.5) * (backward ? backwardDistance : 1)
            let sign: Double = backward ? -1 : 1
            steps.append(Step(time: time, gesture: .dragging))
            let dragSpeed = distance * dragShare / dragTime
            var elapsed = 0.0, stopped = false
            while elapsed < dragTime && !stopped {
                let dt = min(tick, dragTime - elapsed)
                elapsed += dt
                time += dt
                stopped = move(to: position + sign * dragSpeed * dt)
            }
            let v0 = distance * (1 - dragShare) / tau + settleSpeed
            steps.append(Step(time: time, gesture: .flinging))
            let flingStep = steps.count - 1
            var t = 0.0
            while !stopped {
                let speed = v0 * exp(-t / tau)
                if speed < settleSpeed { break }
                t += tick
                time += tick
                stopped = move(to: position + sign * speed * tick)
            }
            steps[flingStep].landing = first
            steps.append(Step(time: time, gesture: .idle))
        }
        return ScrollPlan(steps: steps, duration: time, gestures: gestures)
    }

    /// The mean gesture distance (rows) that makes the net speed `rowsPerSecond`: solved by
    /// iteration, as a gesture's duration grows with its distance.
    package static func meanDistance(rowsPerSecond: Double) -> Double {
        let netShare = (1 - backwardShare) - backwardShare * backwardDistance
        func flingTime(_ distance: Double) -> Double {
            let v0 = distance * (1 - dragShare) / tau + settleSpeed
            return tau * log(v0 / settleSpeed)
        }
        var distance = rowsPerSecond
        for _ in 0..<50 {
            let gestureTime = 1.0 + dragTime + (1 - backwardShare) * flingTime(distance)
                + backwardShare * flingTime(distance * backwardDistance)
            distance = rowsPerSecond * gestureTime / netShare
        }
        return distance
    }

    /// A digest of the plan (FNV-1a over its steps): equal seeds give equal digests.
    package var digest: String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for step in steps {
            for byte in "\(Int((step.time * 1e6).rounded())):\(step.firstRow ?? -1):\(step.gesture?.rawValue ?? "");".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return String(hash, radix: 16)
    }
}
