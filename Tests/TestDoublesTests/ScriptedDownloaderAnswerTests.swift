import Fetch
import FetchTesting
import Policy
import Testing

/// Answers computed from the request, whole responses with status and header fields, and
/// answers held at a gate the test opens: as an app's own tests use them.
struct ScriptedDownloaderAnswerTests {
    @Test func answeringComputesEachUnscriptedAnswerFromItsRequestAndAScriptComesFirst() async throws {
        let gone = ImageURL("https://img.example/gone.jpg")!
        let downloader = ScriptedDownloader { request in
            request.url == gone ? .failure(.httpStatus(410)) : .bytes(jpeg)
        }
        downloader.script(thumbnail, .bytes(smallJPEG))
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        #expect(try await pipeline.image(for: photo).bytes == jpeg)
        #expect(try await pipeline.image(for: thumbnail).bytes == smallJPEG)
        await #expect(throws: FetchError(url: gone, code: .httpStatus(410))) { try await pipeline.image(for: gone) }
        #expect(downloader.requests == [photo, thumbnail, gone])
    }

    @Test func aResponseAnswerKeepsItsStatusAndHeaderFieldsAndTheRequestsKeepTheirs() async throws {
        let downloader = ScriptedDownloader { request in
            let validator = request.headers.first { $0.name == "If-None-Match" }?.value
            return validator == "\"v1\""
                ? .response(DownloadResponse(status: 304, headers: [("ETag", "\"v1\"")], body: [], requestedAt: .now(), receivedAt: .now()))
                : .response(DownloadResponse(status: 200, headers: [("ETag", "\"v1\"")], body: jpeg, requestedAt: .now(), receivedAt: .now()))
        }
        let first = try await downloader.response(for: photo, headers: [])
        #expect(first.status == 200 && first.body == jpeg && first.header("etag") == "\"v1\"")
        let again = try await downloader.response(for: photo, headers: [("If-None-Match", "\"v1\"")])
        #expect(again.status == 304 && again.body.isEmpty)
        #expect(downloader.receivedRequests.map { $0.headers.map(\.name) } == [[], ["If-None-Match"]])
        // `download(_:)` asks without header fields: the 200's body.
        #expect(try await downloader.download(photo) == jpeg)
    }

    @Test func aResponseWithAFailingStatusFailsAPlainDownload() async throws {
        let downloader = ScriptedDownloader()
        downloader.script(photo, .response(DownloadResponse(status: 503, body: [], requestedAt: .now(), receivedAt: .now())))
        await #expect(throws: FetchError(url: photo, code: .httpStatus(503))) { try await downloader.download(photo) }
    }

    @Test func aGateHoldsAnAnswerUntilTheTestOpensItThenLetsEveryAnswerThrough() async throws {
        let gate = ScriptedDownloader.Gate()
        let downloader = ScriptedDownloader()
        downloader.script(photo, .bytes(jpeg), heldBy: gate)
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        let load = Task { try await pipeline.image(for: photo) }
        await gate.waitForWaiters(1)
        #expect(downloader.inFlightCount == 1 && gate.waitingCount == 1)
        #expect(pipeline.memory.image(for: photo) == nil, "held at the gate: nothing arrived yet")
        gate.open()
        #expect(try await load.value.bytes == jpeg)
        #expect(gate.waitingCount == 0 && gate.isOpen)
        #expect(try await downloader.download(photo) == jpeg, "an open gate holds nothing")
    }

    @Test(arguments: [ScriptedDownloader.Gate.WhenCancelled.stopsAtOnce, .stopsAtGate, .completes])
    func aDownloadCancelledAtTheGate(_ whenCancelled: ScriptedDownloader.Gate.WhenCancelled) async throws {
        let gate = ScriptedDownloader.Gate(whenCancelled: whenCancelled)
        let downloader = ScriptedDownloader(heldBy: gate) { _ in .bytes(jpeg) }
        let load = Task { try await downloader.download(photo) }
        await gate.waitForWaiters(1)
        load.cancel()
        if whenCancelled == .stopsAtOnce {
            // Stops while the gate is still closed.
            await #expect(throws: FetchError(url: photo, code: .cancelled)) { try await load.value }
            #expect(gate.waitingCount == 0 && !gate.isOpen)
            return
        }
        #expect(gate.waitingCount == 1, "still held after the cancellation")
        gate.open()
        if whenCancelled == .completes {
            #expect(try await load.value == jpeg)
        } else {
            await #expect(throws: FetchError(url: photo, code: .cancelled)) { try await load.value }
        }
    }

    @Test func aFixedLatencyAnswersWhenTheClockSays() async throws {
        let clock = ManualClock()
        let downloader = ScriptedDownloader(clock: clock, latency: .fixed(.seconds(3))) { _ in .bytes(jpeg) }
        let load = Task { try await downloader.download(photo) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(clock.sleeperCount == 1 && downloader.inFlightCount == 1, "2 s of 3: still waiting")
        clock.advance(by: .seconds(1))
        #expect(try await load.value == jpeg)
    }

    @Test func aRandomLatencyIsReplayedFromItsSeedAndStaysWithinItsMaximum() {
        let seed: UInt64 = 0x5EED_0017
        let (first, replay, other) = (ScriptedDownloader.Latency.random(upTo: .milliseconds(2), seed: seed),
                                      ScriptedDownloader.Latency.random(upTo: .milliseconds(2), seed: seed),
                                      ScriptedDownloader.Latency.random(upTo: .milliseconds(2), seed: seed + 1))
        let delays = (0..<200).map { _ in first.next() }
        #expect((0..<200).map { _ in replay.next() } == delays)
        #expect((0..<200).map { _ in other.next() } != delays)
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .milliseconds(2) })
        #expect(Set(delays.map { $0.components.attoseconds }).count > 100, "spread, not one value")
    }

    @Test func withOneDownloadAtATimeTheMostUrgentQueuedStartsNextAsItsPriorityIsThen() async throws {
        let (early, raised, dropped) = (ImageURL("https://img.example/early.jpg")!, ImageURL("https://img.example/raised.jpg")!,
                                        ImageURL("https://img.example/dropped.jpg")!)
        let gate = ScriptedDownloader.Gate()
        let downloader = ScriptedDownloader(concurrentDownloads: 1, heldBy: gate) { _ in .bytes(jpeg) }
        let running = Task { try await downloader.download(photo) }
        await gate.waitForWaiters(1)
        let priority = RequestPriority(LoadPriority(.prefetch, order: 5))
        let first = Task { try await downloader.download(early, priority: RequestPriority(LoadPriority(.prefetch, order: 0))) }
        let second = Task { try await downloader.download(raised, priority: priority) }
        let third = Task { try await downloader.download(dropped, priority: RequestPriority(.visible)) }
        for _ in 0..<100_000 where downloader.queuedCount < 3 { await Task.yield() }
        #expect(downloader.queuedCount == 3 && downloader.startedURLs == [photo])
        third.cancel()                                          // leaves the queue without starting
        await #expect(throws: FetchError(url: dropped, code: .cancelled)) { try await third.value }
        #expect(downloader.queuedURLs == [early, raised])
        priority.value = LoadPriority(.visible, order: 0)       // raised while it waits
        gate.letThrough(photo)
        #expect(try await running.value == jpeg)
        await gate.waitForWaiters(1)
        #expect(downloader.startedURLs == [photo, raised] && downloader.queuedURLs == [early])
        gate.letThrough(raised)
        gate.letThrough(early)                                  // kept for it until it arrives
        #expect(try await second.value == jpeg)
        #expect(try await first.value == jpeg)
        #expect(downloader.startedURLs == [photo, raised, early] && downloader.queuedCount == 0)
        #expect(!gate.isOpen)
    }
}
