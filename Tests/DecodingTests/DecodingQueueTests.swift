import Dispatch
import Glibc
import Support
import Testing
import TestSupport
@testable import Decoding

/// The bounded decoding pool: concurrency bound, cancellation while decoding and before starting.
@Suite struct DecodingQueueTests {
    /// A stand-in decode that records calls and blocks until released.
    final class BlockingWork: Sendable {
        struct Counts { var calls: [Int] = []; var running = 0; var peak = 0; var finished = 0 }
        let counts = Locked(Counts())
        let gate = DispatchSemaphore(value: 0)

        func run(_ bytes: [UInt8]) -> DecodedImage {
            counts.withLock { $0.calls.append(Int(bytes.first ?? 0)); $0.running += 1; $0.peak = max($0.peak, $0.running) }
            gate.wait()
            counts.withLock { $0.running -= 1; $0.finished += 1 }
            return DecodedImage(width: 1, height: 1, bytesPerRow: 4, pixels: [bytes.first ?? 0, 0, 0, 255])
        }

        func queue(maximum: Int) -> DecodingQueue {
            DecodingQueue(maximumConcurrentDecodes: maximum) { bytes, _ in self.run(bytes) }
        }
    }

    @Test func atMostTheMaximumDecodeAtOnceAndTheDefaultIsTheCores() async throws {
        let work = BlockingWork()
        let queue = work.queue(maximum: 2)
        let tasks = (0..<6).map { i in Task { try await queue.decode([UInt8(i)]) } }
        #expect(await waitUntil { work.counts.withLock { $0.running } == 2 })
        for _ in 0..<6 {
            work.gate.signal()
        }
        for (i, task) in tasks.enumerated() { #expect(try await task.value.pixels[0] == UInt8(i)) }
        #expect(work.counts.withLock { $0.peak } == 2)
        #expect(work.counts.withLock { $0.calls.sorted() } == Array(0..<6))
        #expect(DecodingQueue().maximumConcurrentDecodes == Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    @Test func aTaskCancelledWhileItsImageDecodesNeverReceivesIt() async throws {
        let work = BlockingWork()
        let queue = work.queue(maximum: 1)
        let task = Task { try await queue.decode([7]) }
        #expect(await waitUntil { work.counts.withLock { $0.running } == 1 })
        task.cancel()
        // The task ends at once with `.cancelled`, while its decode is still running.
        let error = await #expect(throws: DecodingError.self) { try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(work.counts.withLock { $0.finished } == 0)
        work.gate.signal()
        #expect(await waitUntil { work.counts.withLock { $0.finished } == 1 })
    }

    @Test func aDecodeCancelledBeforeItStartsIsSkipped() async throws {
        let work = BlockingWork()
        let queue = work.queue(maximum: 1)
        let first = Task { try await queue.decode([1]) }
        #expect(await waitUntil { work.counts.withLock { $0.running } == 1 })
        let second = Task { try await queue.decode([2]) }
        #expect(await waitUntil { queue.waitingCount == 1 })  // queued behind the first
        second.cancel()
        let error = await #expect(throws: DecodingError.self) { try await second.value }
        #expect(error?.kind == .cancelled)
        let third = Task { try await queue.decode([3]) }
        for _ in 0..<3 { work.gate.signal() }  // one spare: a second run would not hang the test
        #expect(try await first.value.pixels[0] == 1)
        #expect(try await third.value.pixels[0] == 3)
        // The queue is first in, first out: the second would have run before the third.
        #expect(work.counts.withLock { $0.calls } == [1, 3])
    }

    @Test func aTaskCancelledBeforeCallingNeverDecodes() async throws {
        let work = BlockingWork()
        let queue = work.queue(maximum: 1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.decode([9])
        }
        let error = await #expect(throws: DecodingError.self) { try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(work.counts.withLock { $0.calls }.isEmpty)
    }

    @Test func realDecodesRunOffTheCallersThreadWithTheSameResult() async throws {
        let bytes = Array(try PNGEncoder().encode(Samples.gradient(width: 300, height: 200)))
        let queue = DecodingQueue()
        let images = try await withThrowingTaskGroup(of: DecodedImage.self) { group in
            for _ in 0..<4 { group.addTask { try await queue.decode(bytes, to: TargetSize(width: 60, height: 60)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let direct = try ImageDecoder().decode(bytes, to: TargetSize(width: 60, height: 60))
        #expect(images.count == 4 && images.allSatisfy { $0 == direct })
        let error = await #expect(throws: DecodingError.self) { try await queue.decode([1, 2, 3]) }
        #expect(error?.kind == .unsupportedFormat)
    }
}

/// The memory cache of decoded images.
@Suite struct PixelCacheTests {
    func image(_ side: Int, _ value: UInt8 = 0) -> DecodedImage {
        DecodedImage(width: side, height: side, bytesPerRow: side * 4, pixels: [UInt8](repeating: value, count: side * side * 4))
    }

    @Test func theLimitCountsPixelBytesAndEvictsTheLeastRecentlyUsed() {
        let cache = PixelCache(costLimit: 1_000)  // two 10x10 images (400 bytes each), not three
        let a = PixelCache.Key(url: "https://h/a", size: TargetSize(width: 10, height: 10))
        let b = PixelCache.Key(url: "https://h/b", size: TargetSize(width: 10, height: 10))
        let c = PixelCache.Key(url: "https://h/c", size: nil)
        cache.insert(image(10, 1), for: a)
        cache.insert(image(10, 2), for: b)
        #expect(cache.totalCost == 800 && cache.count == 2)
        #expect(cache.image(for: a)?.pixels[0] == 1)  // a is now the most recently used
        cache.insert(image(10, 3), for: c)
        #expect(cache.image(for: b) == nil)
        #expect(cache.image(for: a) != nil && cache.image(for: c) != nil)
        #expect(cache.totalCost == 800)
        // Replacing an entry counts its new cost only.
        cache.insert(image(5, 4), for: c)
        #expect(cache.totalCost == 500)
        // Larger than the whole limit: not stored, nothing evicted.
        cache.insert(image(20), for: b)
        #expect(cache.image(for: b) == nil && cache.count == 2)
    }

    @Test func theSameURLAtAnotherSizeIsAnotherEntry() {
        let cache = PixelCache()
        cache.insert(image(4, 1), for: .init(url: "u", size: TargetSize(width: 4, height: 4)))
        #expect(cache.image(for: .init(url: "u", size: TargetSize(width: 8, height: 8))) == nil)
        #expect(cache.image(for: .init(url: "u", size: TargetSize(width: 4, height: 4, contentMode: .fill))) == nil)
        #expect(cache.image(for: .init(url: "u", size: TargetSize(width: 4, height: 4)))?.pixels[0] == 1)
    }

    @Test func purgeEmptiesTheCache() {
        let cache = PixelCache()
        for i in 0..<5 { cache.insert(image(8), for: .init(url: "u\(i)", size: nil)) }
        #expect(cache.count == 5 && cache.totalCost == 5 * 256)
        cache.purge()
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache.image(for: .init(url: "u0", size: nil)) == nil)
    }
}
