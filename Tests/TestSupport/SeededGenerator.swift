import Foundation

/// A small deterministic random generator (SplitMix64): a test that draws from it replays the
/// same choices from the same seed, so that a failure can be reproduced.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// A generator for the property test `label`, seeded with `seed`, or with the value of the
    /// environment variable `IMGPOLICY_TEST_SEED` when it is set (to replay a failure); the seed
    /// used is printed, so that every failure can be replayed.
    public init(seed: UInt64, label: String) {
        let replayed = ProcessInfo.processInfo.environment["IMGPOLICY_TEST_SEED"].flatMap { UInt64($0) }
        let used = replayed ?? seed
        print("[seed] \(label): \(used) (replay with IMGPOLICY_TEST_SEED=\(used))")
        state = used
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
