import CNetlink
import Support

/// An eventfd that wakes the event loop's `poll`: any thread may signal it; the descriptor is
/// closed only when the last holder lets go, so a late signal never writes to a reused number.
///
/// Thread safety: `signal()` and `drain()` may be called from any thread at once (eventfd
/// reads and writes are atomic).
final class WakeSignal: Sendable {
    /// The descriptor, for `poll`.
    let descriptor: Int32

    /// Opens the eventfd.
    /// - Throws: the `errno` of `eventfd(2)`.
    init() throws(LinuxReachability.StartError) {
        let fd = cnetlink_open_wake_descriptor()
        guard fd >= 0 else { throw LinuxReachability.StartError(operation: "eventfd", code: errno) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Wakes the loop.
    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Resets the counter after a wake-up.
    func drain() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(descriptor, $0.baseAddress, $0.count) }
    }
}
