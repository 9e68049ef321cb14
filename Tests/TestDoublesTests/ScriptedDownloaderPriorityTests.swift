import Fetch
import FetchTesting
import Policy
import Testing

/// What `ScriptedDownloader` records of priorities, for a list's tests: the value each download
/// was asked with, and the value now of the latest download of a URL.
struct ScriptedDownloaderPriorityTests {
    @Test func eachDownloadKeepsItsPriorityAndARaiseWhileItWaitsShows() async throws {
        let clock = ManualClock()
        let downloader = ScriptedDownloader(clock: clock)
        downloader.script(photo, .bytes(jpeg), after: .seconds(5))
        downloader.script(thumbnail, .bytes(jpeg))
        let priority = RequestPriority(LoadPriority(.prefetch, order: 4))
        let load = Task { try await downloader.download(photo, priority: priority) }
        await clock.waitForSleepers(1)
        _ = try await downloader.download(thumbnail)
        // The row scrolls onto the screen while its download waits.
        priority.value = LoadPriority(.visible, order: 1)
        #expect(downloader.priority(of: photo) == LoadPriority(.visible, order: 1))
        #expect(downloader.priority(of: thumbnail) == .visible)
        #expect(downloader.priority(of: ImageURL("https://img.example/never.jpg")!) == nil)
        #expect(downloader.requestedPriorities.map(\.url) == [photo, thumbnail])
        #expect(downloader.requestedPriorities.map(\.priority) == [LoadPriority(.prefetch, order: 4), .visible])
        clock.advance(by: .seconds(5))
        #expect(try await load.value == jpeg)
    }

    @Test func networkReturnsAreCounted() {
        let downloader = ScriptedDownloader()
        downloader.networkReturned()
        downloader.networkReturned()
        #expect(downloader.networkReturnCount == 2)
    }
}
