import Support
/// The simulation's deterministic generator (SplitMix64): the same seed replays the same scroll
/// gestures and the same per-URL latencies.
package struct SimulationRandom: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    /// A generator for one purpose (`"latency /o/12.png"`), independent of the order draws are
    /// made in: the seed mixed with the purpose's FNV-1a hash.
    package init(seed: UInt64, purpose: String) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in purpose.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        state = seed ^ hash
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in `range`.
    package mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(next() >> 11) / Double(1 << 53)
    }
}
