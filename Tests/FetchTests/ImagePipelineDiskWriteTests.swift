import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import Logging
import Policy
import Testing
import TestSupport

/// The disk-write queue's bookkeeping, without I/O.
struct ImagePipelineDiskWriteBacklogTests {
    typealias Backlog = DiskWriteBacklog<String, String>

    @Test func pastTheBoundWritesAreDroppedAndCounted() {
        var backlog = Backlog(policy: DiskWritePolicy(maxPendingWrites: 2, whenFull: .drop))
        #expect(backlog.offer(10) == .write(sequence: 1))
        #expect(backlog.offer(10) == .write(sequence: 2))
        #expect(backlog.offer(10) == .dropped)
        #expect(backlog.dropped == 1 && backlog.pending.count == 2)
        _ = backlog.finished(1, failed: false)
        #expect(backlog.offer(10) == .write(sequence: 3))
    }

    @Test func theByteBoundCountsButASingleLargeBodyPassesAnEmptyQueue() {
        var backlog = Backlog(policy: DiskWritePolicy(maxPendingWrites: 10, maxPendingBytes: 100, whenFull: .drop))
        #expect(backlog.offer(500) == .write(sequence: 1))
        #expect(backlog.offer(1) == .dropped)
        _ = backlog.finished(1, failed: true)
        #expect(backlog.failed == 1)
        #expect(backlog.offer(60) == .write(sequence: 2))
        #expect(backlog.offer(60) == .dropped)
        #expect(backlog.offer(40) == .write(sequence: 3))
    }

    @Test func withWaitAFullQueueAdmitsWaitersInOrderAsWritesEnd() {
        var backlog = Backlog(policy: DiskWritePolicy(maxPendingWrites: 1, whenFull: .wait))
        #expect(backlog.offer(1) == .write(sequence: 1))
        #expect(backlog.offer(1) == .wait)
        #expect(backlog.waitForRoom("a", bytes: 1) == nil)
        #expect(backlog.offer(1) == .wait)
        #expect(backlog.waitForRoom("b", bytes: 1) == nil)
        let first = backlog.finished(1, failed: false)
        #expect(first.admitted.map(\.waiter) == ["a"] && first.admitted.map(\.sequence) == [2])
        let second = backlog.finished(2, failed: false)
        #expect(second.admitted.map(\.waiter) == ["b"])
        #expect(backlog.dropped == 0)
    }

    @Test func aFlushWaitsForEarlierWritesOnly() {
        var backlog = Backlog(policy: DiskWritePolicy(maxPendingWrites: 100))
        let idleWaits = backlog.flush("idle")
        #expect(!idleWaits)                              // nothing queued: return at once
        _ = backlog.offer(1)
        _ = backlog.offer(1)
        let waits = backlog.flush("f")
        #expect(waits)
        _ = backlog.offer(1)                             // later writes: not waited for
        _ = backlog.offer(1)
        #expect(backlog.finished(2, failed: false).flushed.isEmpty)
        #expect(backlog.finished(1, failed: false).flushed == ["f"])
        #expect(backlog.pending.count == 2)
    }
}

/// The queue over a store that blocks until the test lets each write through.
struct ImagePipelineDiskWriteQueueTests {
    @Test func theQueueIsBoundedAndDroppedWritesAreCountedAndLogged() async {
        let store = BlockingStore()
        let (logger, records) = RecordingLogHandler.logger()
        let queue = DiskWriteQueue(policy: DiskWritePolicy(maxPendingWrites: 4, whenFull: .drop), logger: logger,
                                   entryPath: { "/cache/\($0)" }, store: store.store)
        for index in 0..<10 { await queue.enqueue([1, 2, 3], for: doubleURL("w\(index)")) }
        #expect(queue.statistics.pending == 4 && queue.statistics.dropped == 6)
        #expect(records.all.filter { $0.level == .warning && $0.message.contains("dropped") }.count == 6)
        #expect(records.all.first?.metadata["url"] == "\(doubleURL("w4"))")
        store.release(4)
        await queue.flush()
        #expect(queue.statistics == DiskWriteQueue.Statistics(pending: 0, written: 4, failed: 0, dropped: 6))
    }

    @Test func withWaitLoadsSuspendUntilThereIsRoomAndNothingIsLost() async {
        let store = BlockingStore()
        let queue = DiskWriteQueue(policy: DiskWritePolicy(maxPendingWrites: 2, whenFull: .wait), logger: .disabled,
                                   entryPath: { "\($0)" }, store: store.store)
        let loads = (0..<6).map { index in Task { await queue.enqueue([1], for: doubleURL("p\(index)")) } }
        #expect(await waitUntil { queue.waiting.room == 4 })
        #expect(queue.statistics.pending == 2)
        store.release(6)
        for load in loads { await load.value }
        await queue.flush()
        #expect(queue.statistics == DiskWriteQueue.Statistics(pending: 0, written: 6, failed: 0, dropped: 0))
        #expect(Set(store.stored) == Set((0..<6).map { doubleURL("p\($0)") }))
    }

    /// New writes keep arriving and are never let through, yet the flush returns once the writes
    /// queued before it are done (it used to wait for an empty queue).
    @Test func flushReturnsWhileNewWritesKeepArriving() async {
        let store = BlockingStore()
        let queue = DiskWriteQueue(policy: DiskWritePolicy(maxPendingWrites: 10_000), logger: .disabled,
                                   entryPath: { "\($0)" }, store: store.store)
        await queue.enqueue([1], for: doubleURL("before-1"))
        await queue.enqueue([1], for: doubleURL("before-2"))
        let flushDone = Flag()
        let flushed = Task {
            await queue.flush()
            flushDone.set()
        }
        #expect(await waitUntil { queue.waiting.flush == 1 })
        let producer = Task {
            var index = 0
            while !Task.isCancelled {
                await queue.enqueue([1], for: doubleURL("after-\(index)"))
                index += 1
                await Task.yield()
            }
        }
        #expect(await waitUntil { queue.statistics.pending > 20 })
        store.release(2)                                 // exactly the writes queued before the flush
        let returned = await waitUntil { flushDone.value }
        #expect(returned, "the flush waited for writes queued after it")
        #expect(Array(store.stored.prefix(2)) == [doubleURL("before-1"), doubleURL("before-2")])
        #expect(queue.statistics.pending > 0)
        producer.cancel()
        await producer.value
        store.release(queue.statistics.pending + 1000)
        await flushed.value
        await queue.flush()
        #expect(queue.statistics.pending == 0)
    }
}

/// The pipeline's disk writes on a real disk cache.
struct ImagePipelineDiskTests {
    let folder = TemporaryFolder()

    /// While loads keep queuing writes, every image loaded before `flush` is on disk when it returns.
    @Test func afterFlushEveryImageLoadedBeforeItIsOnDisk() async throws {
        let disk = try DiskCache(folder: folder.path)
        let pipeline = ImagePipeline(downloader: ScriptedDownloader.instant, disk: disk, diskWrites: .waitWhenFull)
        let before = (0..<50).map { doubleURL("before-\($0)") }
        for url in before { _ = try await pipeline.image(for: url) }
        let producers = (0..<4).map { producer in
            Task {
                var index = 0
                while !Task.isCancelled {
                    _ = try? await pipeline.image(for: doubleURL("steady-\(producer)-\(index)"))
                    index += 1
                }
            }
        }
        #expect(await waitUntil { pipeline.statistics.downloads > 200 })
        await pipeline.flush()
        #expect(before.allSatisfy { disk.containsImage(at: $0) })
        for producer in producers { producer.cancel() }
        for producer in producers { await producer.value }
        // The producers' last writes may still be queued: let them land before the test's folder
        // is removed (a write after the removal began left the folder behind, shards and journal).
        await pipeline.flush()
    }

    /// Disk reads and writes run on the disk threads, not on the calling task; memory hits do not
    /// touch them.
    @Test func diskReadsAndWritesRunOnThreadsOfTheirOwn() async throws {
        let disk = try DiskCache(folder: folder.path)
        let pipeline = ImagePipeline(downloader: ScriptedDownloader.instant, disk: disk)
        let url = doubleURL("threads")
        let readsBefore = pipeline.readers.jobsStarted
        #expect(try await pipeline.image(for: url).source == .network)
        await pipeline.flush()
        #expect(pipeline.writes?.thread.jobsStarted == 2)   // the write, then flush()'s barrier behind it
        #expect(try await pipeline.image(for: url).source == .memory)
        let readsAfterMemoryHit = pipeline.readers.jobsStarted
        pipeline.memory.purge()
        #expect(try await pipeline.image(for: url).source == .disk)
        #expect(pipeline.readers.jobsStarted == readsAfterMemoryHit + 1)
        #expect(readsAfterMemoryHit == readsBefore + 1)   // the load looked on disk once, off the caller
    }

    /// A file where the cache's `tmp/` folder should be: each failed write is counted, logged
    /// with its path, and kept (one per distinct message) for the command to report.
    @Test func failedWritesAreCountedLoggedAndKept() async throws {
        let disk = try DiskCache(folder: folder.path)
        try FileManager.default.removeItem(atPath: folder.file("tmp"))
        try folder.write("not a folder", to: "tmp")
        let (logger, records) = RecordingLogHandler.logger()
        let pipeline = ImagePipeline(downloader: ScriptedDownloader.instant, disk: disk, logger: logger)
        for index in 0..<3 {
            let image = try await pipeline.image(for: doubleURL("f\(index)"))
            #expect(image.source == .network)            // delivered all the same
        }
        await pipeline.flush()
        #expect(pipeline.statistics.diskWriteFailures == 3)
        let failures = pipeline.statistics.diskWriteFailureCauses
        #expect(failures.count == 1)
        #expect(failures.first?.error.path.hasPrefix(folder.path) == true)
        #expect(failures.first?.occurrences == 3)
        let logged = records.all.filter { $0.level == .error }
        #expect(logged.count == 3)
        #expect(logged.allSatisfy { $0.metadata["path"]?.hasPrefix(folder.path) == true && $0.metadata["url"] != nil })
    }

    @Test func failedLoadsAreLoggedWithURLAndCause() async throws {
        let (logger, records) = RecordingLogHandler.logger()
        let url = doubleURL("missing")
        let pipeline = ImagePipeline(downloader: ScriptedDownloader { _ in .failure(.httpStatus(404)) }, disk: nil, logger: logger)
        await #expect(throws: FetchError(url: url, code: .httpStatus(404))) { try await pipeline.image(for: url) }
        let warning = try #require(records.all.first { $0.level == .warning })
        #expect(warning.metadata["url"] == "\(url)")
        #expect(warning.metadata["error"]?.contains("HTTP 404") == true)
    }
}

/// A flag set once, read from any thread.
final class Flag: @unchecked Sendable {
    // Guards `isSet`.
    private let lock = NSLock()
    private var isSet = false

    func set() { lock.withLock { isSet = true } }
    var value: Bool { lock.withLock { isSet } }
}
