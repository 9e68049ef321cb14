import Transport
import Caching
import Accounting
import HTTPSemantics
/// How many downloads may wait to be written to the disk cache, and what happens past that.
///
/// A download is delivered as soon as it is in the memory cache; its disk write waits in a queue
/// served by a thread of its own. The queue is bounded so that a disk slower than the network
/// cannot grow it without end.
///
/// ```swift
/// let pipeline = ImagePipeline(downloader: transport, disk: disk, diskWrites: .waitWhenFull)
/// ```
///
/// In use: the `Fetch` guide “Caching and Data Accounting”.
public struct DiskWritePolicy: Sendable, Hashable {
    /// What a full queue does with one more write.
    public enum WhenFull: Sendable, Hashable {
        /// The write is dropped (counted and logged): the image is delivered at once and stays in
        /// the memory cache, but is not on disk. For apps, where a cache write is an optimisation.
        case drop
        /// The load waits (suspended, no thread blocked) until there is room, then delivers: no
        /// write is lost. For batch tools such as `imgpolicy --fetch`.
        case wait
    }

    /// The most writes queued or running (at least 1). Default 64.
    public var maxPendingWrites: Int
    /// The most bytes queued or running; a single larger body is let in when the queue is empty.
    /// Default 64 MiB.
    public var maxPendingBytes: Int
    /// What a full queue does. Default `.drop`.
    public var whenFull: WhenFull

    /// Creates a policy.
    public init(maxPendingWrites: Int = 64, maxPendingBytes: Int = 64 << 20, whenFull: WhenFull = .drop) {
        self.maxPendingWrites = max(1, maxPendingWrites)
        self.maxPendingBytes = max(0, maxPendingBytes)
        self.whenFull = whenFull
    }

    /// 64 writes or 64 MiB; past that, writes are dropped. The default.
    public static let dropWhenFull = DiskWritePolicy()

    /// 64 writes or 64 MiB; past that, loads wait for room.
    public static let waitWhenFull = DiskWritePolicy(whenFull: .wait)
}
