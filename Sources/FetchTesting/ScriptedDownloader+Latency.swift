import Support

extension ScriptedDownloader {
    /// How long each answer of a downloader made with `answering` takes, on its clock: none, a
    /// fixed delay, or a random one drawn from a seed (for stress tests whose loads must finish
    /// in a different order each time, yet be replayed from the seed the test prints).
    ///
    /// ```swift
    /// let downloader = ScriptedDownloader(latency: .random(upTo: .milliseconds(2), seed: seed)) {
    ///     .bytes(body(of: $0.url))
    /// }
    /// ```
    ///
    /// The seed fixes the sequence of delays; which of several concurrent downloads draws which
    /// delay is up to the scheduler.
    public struct Latency: Sendable {
        private let draw: @Sendable () -> Duration

        private init(_ draw: @escaping @Sendable () -> Duration) {
            self.draw = draw
        }

        /// Answers at once.
        public static let none = Latency { .zero }

        /// Each answer after `delay`.
        public static func fixed(_ delay: Duration) -> Latency {
            Latency { delay }
        }

        /// Each answer after a delay drawn uniformly from zero to `maximum` (in whole
        /// microseconds), the draws fixed by `seed`.
        public static func random(upTo maximum: Duration, seed: UInt64) -> Latency {
            let (seconds, attoseconds) = maximum.components
            let micros = max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
            // Guards the generator, drawn from by concurrent downloads.
            let generator = Locked(SplitMix64(seed: seed))
            return Latency {
                .microseconds(generator.withLock { Int.random(in: 0...micros, using: &$0) })
            }
        }

        /// Draws the delay of the next answer (a random latency moves on in its sequence).
        public func next() -> Duration { draw() }
    }
}

/// SplitMix64: a small seeded generator whose sequence depends only on its seed.
private struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
