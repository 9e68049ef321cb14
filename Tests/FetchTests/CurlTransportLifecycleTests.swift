import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// The transport's lifecycle: shutdown variants, what they free, and a transport that was never
/// shut down.
@Suite(.serialized)
struct CurlTransportLifecycleTests {
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
        server.route("/hang", .hang)
        server.route("/image", .ok(TestImages.png()))
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// A transport that runs one transfer at a time, with one stuck on `/hang` and one waiting.
    func busyTransport() async -> (CurlTransport, [Task<[UInt8], any Error>]) {
        var configuration = TransportConfiguration()
        configuration.maximumConnections = 1
        let transport = CurlTransport(configuration: configuration)
        _ = try? await transport.download(url("/image"))
        let running = Task { try await transport.download(url("/hang")) }
        #expect(await waitUntil { server.hits("/hang") == 1 })
        let waiting = Task { try await transport.download(url("/image")) }
        #expect(await waitUntil { transport.load == .init(running: 1, waiting: 1) })
        return (transport, [running, waiting])
    }

    @Test(.timeLimit(.minutes(5)))
    func shutdownCancelsEveryTransferAndFreesEveryHandle() async throws {
        let (transport, tasks) = await busyTransport()
        #expect(transport.scheduler.openHandles.load(ordering: .acquiring) == 2)  // the multi handle and one easy handle
        await transport.shutdown()
        // When shutdown returns, the thread has freed the multi handle and every easy handle.
        #expect(transport.scheduler.hasStopped)
        #expect(transport.scheduler.openHandles.load(ordering: .acquiring) == 0)
        for task in tasks {
            await #expect(throws: FetchError.self) { try await task.value }
            #expect((try? await task.value) == nil)
        }
        #expect(transport.load == .init(running: 0, waiting: 0))
        // Afterwards: downloads fail at once as asked for after the shutdown (not as cancelled),
        // and shutting down again is harmless.
        await #expect(throws: FetchError(url: url("/image"), code: .alreadyShutdown)) { try await transport.download(url("/image")) }
        await transport.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func concurrentShutdownsAllReturnOnceStopped() async throws {
        let (transport, tasks) = await busyTransport()
        let stoppedWhenReturned = LockedList<Bool>()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    await transport.shutdown()
                    stoppedWhenReturned.append(transport.scheduler.openHandles.load(ordering: .acquiring) == 0)
                }
            }
        }
        // The synchronous variant, from a thread of its own (it blocks: never from async code).
        let thread = LockedList<Bool>()
        Thread.detachNewThread {
            transport.syncShutdown()
            thread.append(transport.scheduler.openHandles.load(ordering: .acquiring) == 0)
        }
        #expect(await waitUntil { thread.values.count == 1 })
        #expect(stoppedWhenReturned.values == [true, true, true, true])
        #expect(thread.values == [true])
        for task in tasks { _ = try? await task.value }
    }

    @Test(.timeLimit(.minutes(5)))
    func syncShutdownBlocksUntilTheThreadHasFreedEverything() async throws {
        let (transport, tasks) = await busyTransport()
        let seen = LockedList<Int>()
        Thread.detachNewThread {
            transport.syncShutdown()
            seen.append(transport.scheduler.openHandles.load(ordering: .acquiring))
        }
        #expect(await waitUntil { seen.values.count == 1 })
        #expect(seen.values == [0])
        for task in tasks { await #expect(throws: FetchError.self) { try await task.value } }
    }

    @Test func aTransportDroppedWithoutShutdownStillStopsItsThread() async throws {
        // What release builds do (debug builds fail an assertion instead, tested below).
        weak var scheduler: TransferScheduler?
        do {
            let transport = CurlTransport(configuration: .standard, logger: .disabled,
                                          hooks: TransportHooks(assertsShutdownBeforeDeinit: false))
            #expect(try await transport.download(url("/image")) == TestImages.png())
            scheduler = transport.scheduler
        }
        // The thread held only the scheduler, not the transport: dropping the transport stopped the
        // thread, which freed its handles and let go of the scheduler.
        #expect(await waitUntil { scheduler == nil })
    }

    #if DEBUG
    @Test func aTransportDroppedWithoutShutdownFailsAnAssertionInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            _ = CurlTransport()
        }
    }
    #endif
}

/// The lifecycle state machine, without I/O.
struct TransportLifecycleTests {
    @Test func theFirstRequestWakesTheThreadAndLaterOnesWait() {
        var lifecycle = TransportLifecycle<Int>()
        #expect(lifecycle.isRunning && lifecycle.threadIsAlive && !lifecycle.isStopping)
        #expect(lifecycle.requestShutdown(1) == .wakeThread)
        #expect(!lifecycle.isRunning && lifecycle.isStopping && lifecycle.threadIsAlive)
        #expect(lifecycle.requestShutdown(nil) == .wait)
        #expect(lifecycle.requestShutdown(2) == .wait)
        #expect(lifecycle.threadStopped() == [1, 2])
        #expect(!lifecycle.threadIsAlive && !lifecycle.isStopping)
        #expect(lifecycle.requestShutdown(3) == .resumeNow)
        #expect(lifecycle.threadStopped() == [])
    }

    @Test func aShutdownFromDeinitHasNoWaiter() {
        var lifecycle = TransportLifecycle<Int>()
        #expect(lifecycle.requestShutdown(nil) == .wakeThread)
        #expect(lifecycle.threadStopped() == [])
    }
}
