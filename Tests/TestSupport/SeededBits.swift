import Foundation

/// A `SeededGenerator` that several tasks or threads may draw from: the random latencies of a
/// downloader double, the jitter of a transport. The seed fixes the sequence of draws; which
/// concurrent caller gets which draw is up to the scheduler, so a replay repeats the values, not
/// always their order among tasks (draw each task's choices up front where that matters).
public final class SeededBits: @unchecked Sendable {
    // Guards `generator`.
    private let lock = NSLock()
    private var generator: SeededGenerator

    /// Draws from `seed`, printing nothing (a fixed seed for a mechanism, not a property test).
    public init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    /// Draws for the test `label` from `seed`, or from `IMGPOLICY_TEST_SEED` when it is set; the
    /// seed used is printed (as `SeededGenerator(seed:label:)` does).
    public init(seed: UInt64, label: String) { generator = SeededGenerator(seed: seed, label: label) }

    /// The next 64 random bits.
    public func next() -> UInt64 { lock.withLock { generator.next() } }

    /// A random integer in `range`.
    public func int(in range: ClosedRange<Int>) -> Int { lock.withLock { Int.random(in: range, using: &generator) } }

    /// A random integer in `range`.
    public func int(in range: Range<Int>) -> Int { lock.withLock { Int.random(in: range, using: &generator) } }
}
