import CCurl
import Support
import Policy
import HTTPSemantics

/// Test points of `CurlTransport`, internal: tests reach them with `@testable import Fetch` to put
/// the transport in a given state instead of racing the clock.
struct TransportHooks: Sendable {
    /// The longest wait in `curl_multi_poll` when no socket, timer or wake-up ends it earlier, in
    /// milliseconds. A test sets it very large to prove that a wake-up, not the poll's end, moved
    /// the transport on.
    var pollTimeoutMilliseconds: Int32 = 1000
    /// Called on the transport thread when curl reports a transfer complete, before its result is
    /// worked out: a test cancels the waiter here, at that very instant.
    var transferCompleted: (@Sendable (ImageURL) -> Void)?
    /// Whether `deinit` fails an assertion (debug builds) when `shutdown` was never called. A test
    /// of the release behaviour (the thread still stops) turns it off.
    var assertsShutdownBeforeDeinit = true
    /// What retry backoffs wait on: a `ManualClock` in tests, so that no test waits for real time.
    var clock: any Clock<Duration> = ContinuousClock()
    /// Makes the transport's multi handle: `curl_multi_init` unless a test makes it fail, as it
    /// does when the process has no file descriptor left.
    var makeMultiHandle: @Sendable () -> UnsafeMutableRawPointer? = { curl_multi_init() }
    /// Starts the transport thread: `OwnedThread.detached` unless a test makes it fail, as it
    /// does when the system refuses a thread.
    var startThread: @Sendable (@escaping @Sendable () -> Void) throws(OwnedThread.StartFailure) -> Void = { body throws(OwnedThread.StartFailure) in
        try OwnedThread.detached(body)
    }
    /// The monotonic clock bursts of transfers are gathered on, in nanoseconds: a test stops it
    /// to hold a gathering open for as long as it takes to queue its transfers (a starved machine
    /// may take longer than any window), then moves it past the window.
    var gatheringClock: @Sendable () -> UInt64 = TransferScheduler.monotonicNanoseconds
    /// 64 random bits for the backoff's jitter: a seeded generator in tests.
    var random: @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }
}

/// A `RandomNumberGenerator` over `TransportHooks.random`.
struct HookedRandom: RandomNumberGenerator {
    let bits: @Sendable () -> UInt64

    mutating func next() -> UInt64 { bits() }
}
