import Fetch
import FetchTesting
import Foundation
import Policy
import PolicyTesting
import Testing

// The documented examples of the test doubles, written as an app's own tests would be: they
// import only the public products (Policy, Fetch, PolicyTesting, FetchTesting). No test sleeps:
// time moves on a ManualClock, and tests wait for states (observers, sleepers).

let photo = ImageURL("https://img.example/photo.jpg")!
let thumbnail = ImageURL("https://img.example/photo-t.jpg")!
// A whole JPEG container (start of image, a JFIF segment, end of image): the pipeline refuses a
// body cut short of its format's end, from any downloader.
let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xD9]
/// Another whole JPEG container, smaller: start of image, a comment "t", end of image.
let smallJPEG: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x03, 0x74, 0xFF, 0xD9]

struct ScriptedDownloaderTests {
    @Test func aFailedLoadIsRetriedOnce() async throws {
        let downloader = ScriptedDownloader()
        downloader.script(photo, .failure(.httpStatus(503)), .bytes(jpeg))
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        await #expect(throws: FetchError(url: photo, code: .httpStatus(503))) { try await pipeline.image(for: photo) }
        #expect(try await pipeline.image(for: photo).bytes == jpeg)
        #expect(try await pipeline.image(for: photo).source == .memory)
        #expect(downloader.calls(to: photo) == 2)
    }

    @Test func anUnscriptedURLFailsWith404() async throws {
        let downloader = ScriptedDownloader()
        await #expect(throws: FetchError(url: thumbnail, code: .httpStatus(404))) { try await downloader.download(thumbnail) }
        #expect(downloader.requests == [thumbnail])
    }

    @Test func aDelayEndsWhenTheClockSaysAndIdenticalLoadsShareOneDownload() async throws {
        let clock = ManualClock()
        let downloader = ScriptedDownloader(clock: clock)
        downloader.script(photo, .bytes(jpeg), after: .seconds(5))
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        async let first = pipeline.image(for: photo)
        async let second = pipeline.image(for: photo)
        await clock.waitForSleepers(1)
        #expect(downloader.inFlightCount == 1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1, "4 s of 5: still waiting")
        clock.advance(by: .seconds(1))
        #expect(try await first.bytes == jpeg)
        #expect(try await second.bytes == jpeg)
        #expect(downloader.callCount == 1)
        #expect(downloader.inFlightCount == 0)
    }

    @Test func aDownloadCancelledDuringItsDelayThrowsCancelled() async throws {
        let clock = ManualClock()
        let downloader = ScriptedDownloader(clock: clock)
        downloader.script(photo, .bytes(jpeg), after: .seconds(60))
        let load = Task { try await downloader.download(photo) }
        await clock.waitForSleepers(1)
        load.cancel()
        await #expect(throws: FetchError(url: photo, code: .cancelled)) { try await load.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func suspendAndResumeAreCounted() {
        let downloader = ScriptedDownloader()
        let pipeline = ImagePipeline(downloader: downloader, disk: nil)
        pipeline.suspendDownloads()
        pipeline.resumeDownloads()
        #expect(downloader.suspensions.suspend == 1 && downloader.suspensions.resume == 1)
    }
}

struct DrivenReachabilityTests {
    @Test func everyObserverSeesTheStateNowThenEachChange() async throws {
        let reachability = DrivenReachability(NetworkState(.wifi))
        let seen = Task {
            var states: [NetworkState] = []
            for await state in reachability.stateChanges() { states.append(state) }
            return states
        }
        await reachability.waitForObservers(1)
        reachability.set(NetworkState(.cellular))
        reachability.set(NetworkState(.cellular))       // the same again: not repeated
        reachability.set(NetworkState(.offline))
        reachability.finishObservers()
        #expect(await seen.value == [NetworkState(.wifi), NetworkState(.cellular), NetworkState(.offline)])
        #expect(reachability.history == [NetworkState(.wifi), NetworkState(.cellular), NetworkState(.offline)])
        #expect(reachability.observerCount == 0)
    }

    @Test func anObserverThatStopsIsNoLongerCounted() async throws {
        let reachability = DrivenReachability()
        let observer = Task { for await _ in reachability.stateChanges() {} }
        await reachability.waitForObservers(1)
        #expect(reachability.observerCount == 1)
        observer.cancel()
        await observer.value
        #expect(reachability.observerCount == 0)
    }

    /// The doubles together with the settings double (`InMemorySettingsStore`, in `Policy`): the
    /// decision follows the network the test sets.
    @Test func theLoaderDecidesAgainOnTheNetworkTheTestSets() async throws {
        let reachability = DrivenReachability(NetworkState(.wifi))
        let downloader = ScriptedDownloader()
        downloader.script(photo, .bytes(jpeg))
        downloader.script(thumbnail, .bytes(smallJPEG))
        let loader = ImageLoader(policy: .default, reachability: reachability, settings: InMemorySettingsStore(),
                                 pipeline: ImagePipeline(downloader: downloader, disk: nil))
        let item = ImageItem(id: "photo", original: photo, thumbnail: thumbnail)
        #expect(try loader.decide(item).action == .load(.original, photo))
        reachability.set(NetworkState(.cellular))
        let decision = try loader.decide(item)
        #expect(decision.action == .load(.thumbnail, thumbnail))
        guard case .imageReady(_, let variant, let image) = await loader.load(item, decision: decision) else {
            Issue.record("the thumbnail did not load")
            return
        }
        #expect(variant == .thumbnail)
        #expect(image.bytes == smallJPEG)
        #expect(downloader.requests == [thumbnail])
    }
}

struct TemporaryDiskCacheTests {
    @Test func aSecondPipelineReadsWhatTheFirstWrote() async throws {
        let disk = try TemporaryDiskCache()
        let downloader = ScriptedDownloader()
        downloader.script(photo, .bytes(jpeg))
        let first = ImagePipeline(downloader: downloader, disk: disk.cache)
        #expect(try await first.image(for: photo).source == .network)
        await first.flush()
        let second = ImagePipeline(downloader: downloader, disk: disk.cache)
        #expect(try await second.image(for: photo).source == .disk)
        #expect(downloader.calls(to: photo) == 1)
    }

    @Test func aSeededEntryIsAHitAndTheFolderGoesWithTheValue() async throws {
        var disk: TemporaryDiskCache? = try TemporaryDiskCache()
        let folder = try #require(disk?.folder)
        try disk?.cache.store(jpeg, for: photo)
        let pipeline = ImagePipeline(downloader: ScriptedDownloader(), disk: disk?.cache)
        #expect(pipeline.containsImage(at: photo))
        #expect(try await pipeline.image(for: photo).bytes == jpeg)
        _ = pipeline
        disk = nil
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test func eachCacheHasAFolderOfItsOwn() throws {
        let one = try TemporaryDiskCache(), two = try TemporaryDiskCache()
        try one.cache.store(jpeg, for: photo)
        #expect(one.folder != two.folder)
        #expect(!two.cache.containsImage(at: photo))
    }
}
