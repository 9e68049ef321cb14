import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import Policy
import Testing
import TestSupport

/// Waiters and loads of the real pipeline over downloader doubles: nothing is remembered after
/// the calls end, and a body that fully arrived is kept.
struct ImagePipelineWaiterTests {
    let folder = TemporaryFolder()

    /// 2,000 coalesced waiters, cancelled before they register, while they wait, and after their
    /// image was delivered: afterwards the pipeline remembers nothing (it used to keep up to
    /// 1,998 ids of waiters cancelled after delivery, forever).
    @Test func thousandsOfWaitersCancelledAtEveryMomentLeaveNoBookkeeping() async throws {
        let gate = ScriptedDownloader.Gate()
        let downloader = ScriptedDownloader(heldBy: gate) { .bytes(body(of: $0.url)) }
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let url = doubleURL("shared")
        let tasks = (0..<2000).map { _ in Task { try await pipeline.image(for: url) } }
        // Some are cancelled at once (often before they register), then the load starts.
        for task in tasks[0..<300] { task.cancel() }
        #expect(await waitUntil { downloader.callCount == 1 })
        // Some are cancelled while they wait.
        for task in tasks[300..<700] { task.cancel() }
        gate.open()
        var delivered = 0
        for (index, task) in tasks.enumerated() {
            if index >= 700 { _ = try? await task.value; task.cancel() }   // cancelled after delivery
            if (try? await task.value) != nil { delivered += 1 }
        }
        #expect(delivered >= 1300)
        #expect(downloader.callCount == 1)
        #expect(await waitUntil { pipeline.statistics.isIdle }, "\(pipeline.statistics)")
    }

    /// Many URLs, random latencies, every waiter cancelled at a random moment (or not at all):
    /// once the calls end and the loads stop, nothing is left.
    @Test func randomCancellationsOverManyURLsLeaveNoBookkeeping() async throws {
        var random = SeededGenerator(seed: 0x3000_CA9C, label: "random cancellations over many URLs")
        // Each waiter's fate, drawn up front: a replay gives every waiter the same one.
        let plans = (0..<3000).map { _ in
            (cancel: Int.random(in: 0..<4, using: &random), pause: Int.random(in: 0...3000, using: &random),
             purges: Int.random(in: 0..<10, using: &random) == 0)
        }
        let downloader = ScriptedDownloader(latency: .random(upTo: .milliseconds(2), seed: random.next())) { .bytes(body(of: $0.url)) }
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, plan) in plans.enumerated() {
                group.addTask {
                    let url = doubleURL("u\(index % 40)")
                    let task = Task { try await pipeline.image(for: url) }
                    switch plan.cancel {
                    case 0: task.cancel()
                    case 1: await Task.yield(); task.cancel()
                    case 2: try? await Task.sleep(for: .microseconds(plan.pause)); task.cancel()
                    default: break
                    }
                    if let image = try? await task.value { #expect(image.bytes == body(of: url)) }
                    task.cancel()                                            // after delivery
                    if plan.purges { pipeline.memory.purge() }               // more loads
                }
            }
            try await group.waitForAll()
        }
        #expect(await waitUntil { pipeline.statistics.isIdle }, "\(pipeline.statistics)")
    }

    /// The transfer had completed when every waiter left: the body goes to the memory cache, then
    /// the disk cache, and the next request is not a second download.
    @Test func aCompleteBodyIsCachedEvenIfEveryWaiterLeftThen() async throws {
        let gate = ScriptedDownloader.Gate(whenCancelled: .completes)
        let downloader = ScriptedDownloader(heldBy: gate) { .bytes(body(of: $0.url)) }
        let disk = try DiskCache(folder: folder.path)
        let pipeline = ImagePipeline(downloader: downloader, disk: disk)
        let url = doubleURL("arrived")
        let tasks = (0..<3).map { _ in Task { try await pipeline.image(for: url) } }
        #expect(await waitUntil { gate.waitingCount == 1 })
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: FetchError(url: url, code: .cancelled)) { try await task.value } }
        gate.open()                      // the transport reports the completed transfer
        #expect(await waitUntil { pipeline.statistics.isIdle })
        #expect(pipeline.memory.containsImage(at: url))
        await pipeline.flush()
        #expect(disk.containsImage(at: url))
        let again = try await pipeline.image(for: url)
        #expect(again.source == .memory && again.bytes == body(of: url))
        #expect(downloader.callCount == 1)
    }

    /// A caller arriving while the stopped transfer winds down joins it; the body had arrived, so
    /// it is delivered to that caller without a second download.
    @Test func aCallerArrivingWhileAStoppedTransferEndsGetsItsBody() async throws {
        let gate = ScriptedDownloader.Gate(whenCancelled: .completes)
        let downloader = ScriptedDownloader(heldBy: gate) { .bytes(body(of: $0.url)) }
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let url = doubleURL("joined")
        let first = Task { try await pipeline.image(for: url) }
        #expect(await waitUntil { gate.waitingCount == 1 })
        first.cancel()
        await #expect(throws: FetchError(url: url, code: .cancelled)) { try await first.value }
        let second = Task { try await pipeline.image(for: url) }
        #expect(await waitUntil { pipeline.statistics.waiters == 1 })
        gate.open()
        let image = try await second.value
        #expect(image.source == .network && image.bytes == body(of: url))
        #expect(downloader.callCount == 1)
        #expect(pipeline.statistics.isIdle)
    }

    /// If the stopped transfer did not complete, the callers that joined it get a fresh load, not
    /// a cancellation they never asked for.
    @Test func aCallerJoiningATransferThatWasStoppedGetsAFreshLoad() async throws {
        let gate = ScriptedDownloader.Gate(whenCancelled: .stopsAtGate)
        let downloader = ScriptedDownloader(heldBy: gate) { .bytes(body(of: $0.url)) }
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let url = doubleURL("restarted")
        let first = Task { try await pipeline.image(for: url) }
        #expect(await waitUntil { gate.waitingCount == 1 })
        first.cancel()
        await #expect(throws: FetchError(url: url, code: .cancelled)) { try await first.value }
        // The stopped transfer has not reported back yet: the new caller joins it.
        let second = Task { try await pipeline.image(for: url) }
        #expect(await waitUntil { pipeline.statistics.inFlight == 1 && pipeline.statistics.waiters == 1 })
        gate.open()
        let image = try await second.value
        #expect(image.source == .network && image.bytes == body(of: url))
        #expect(downloader.callCount == 2)
        #expect(pipeline.statistics.isIdle)
    }
}
