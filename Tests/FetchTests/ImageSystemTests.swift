import Fetch
@testable import Caching
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// The front door, `ImageSystem`: made in one line with the command's defaults in a temporary
/// HOME (or XDG folders), loading over a loopback server; its parts overridden; its one shutdown.
@Suite(.serialized)
struct ImageSystemTests {
    let server: TestHTTPServer
    let image = TestImages.png(size: 2048, seed: 17)
    let thumbnailImage = TestImages.png(size: 256, seed: 18)

    init() throws {
        server = try TestHTTPServer()
        server.route("/original.png", .ok(image))
        server.route("/thumbnail.png", .ok(thumbnailImage))
        server.route("/hang.png", .hang)
    }

    var item: ImageItem {
        ImageItem(id: "1", original: ImageURL(server.url("/original.png"))!, thumbnail: ImageURL(server.url("/thumbnail.png")))
    }

    /// Every path under `folder`, relative to it, sorted (folders end with `/`).
    static func tree(_ folder: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var paths: [String] = []
        while let path = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder)
            paths.append(isFolder.boolValue ? path + "/" : path)
        }
        return paths.sorted()
    }

    /// What could be written by mistake outside the given folders: the current folder's
    /// `.cache` and `.config`, the real user's cache and settings (their kinds and sizes).
    static func outsideState() -> [String] {
        let realHome = ProcessInfo.processInfo.environment["HOME"] ?? "/nonexistent"
        let paths = [".cache", ".config", realHome + "/.cache/imgpolicy/journal", realHome + "/.config/imgpolicy/settings.json"]
        return paths.map { path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            return "\(path): \(attributes?[.type] as? String ?? "none") \(attributes?[.size] as? Int ?? -1) \(attributes?[.modificationDate] as? Date ?? .distantPast)"
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func madeInOneLineItLoadsAnImageEndToEndInsideHome() async throws {
        let home = TemporaryFolder()
        let outsideBefore = Self.outsideState()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))

        // The command's defaults: the built-in policy, the settings file and cache folder under HOME.
        #expect(images.policy.name == "default")
        #expect(images.transport != nil)
        #expect(images.pipeline.downloader as? CurlTransport === images.transport)
        #expect(images.pipeline.disk?.folder == home.path + "/.cache/imgpolicy")
        #expect((images.settings as? FileSettingsStore)?.location == home.path + "/.config/imgpolicy/settings.json")
        #expect(images.reachability.currentState == NetworkState(.wifi))

        guard case .imageReady(let decision, let variant, let fetched) = await images.load(item) else {
            Issue.record("no image"); await images.shutdown(); return
        }
        #expect(decision.rule == "wifi-original")
        #expect(variant == .original)
        #expect(fetched.bytes == image)
        #expect(fetched.source == .network)
        // Once more: from memory, no second request.
        guard case .imageReady(_, _, let again) = await images.load(item) else { Issue.record("no image"); await images.shutdown(); return }
        #expect(again.source == .memory)
        #expect(server.hits("/original.png") == 1)

        await images.shutdown()
        // The shutdown flushed the disk write: the image is in the cache folder for the next run.
        let next = try DiskCache(folder: home.path + "/.cache/imgpolicy")
        #expect(next.storedImage(for: item.original)?.bytes == image)

        // Nothing was written but the cache folder: no settings file, nothing outside HOME.
        let written = Self.tree(home.path)
        #expect(written.allSatisfy { $0.hasPrefix(".cache/") })
        #expect(written.contains(".cache/imgpolicy/"))
        #expect(Self.outsideState() == outsideBefore)
    }

    @Test(.timeLimit(.minutes(2)))
    func theXDGFoldersComeBeforeHomeForTheCacheAndTheSettings() async throws {
        let home = TemporaryFolder(), cacheHome = TemporaryFolder(), configHome = TemporaryFolder()
        // The setting the default policy reads, set as `imgpolicy settings set` would.
        try configHome.write(#"{"alwaysDownloadOriginalImage": true}"#, to: "imgpolicy/settings.json")
        let environment = ["HOME": home.path, "XDG_CACHE_HOME": cacheHome.path, "XDG_CONFIG_HOME": configHome.path,
                           "IMGPOLICY_NETWORK": "cellular"]
        let images = try ImageSystem(configuration: .init(environment: environment))

        // On cellular the default policy loads the thumbnail unless the setting says otherwise:
        // the original proves the settings came from XDG_CONFIG_HOME.
        let event = await images.load(item)
        await images.shutdown()
        guard case .imageReady(let decision, .original, let fetched) = event else { Issue.record("\(event)"); return }
        #expect(decision.rule == "cellular-always-original")
        #expect(fetched.bytes == image)
        #expect(Self.tree(home.path).isEmpty)
        #expect(Self.tree(cacheHome.path).contains("imgpolicy/journal"))
        #expect(Self.tree(configHome.path) == ["imgpolicy/", "imgpolicy/settings.json"])
    }

    @Test(.timeLimit(.minutes(2)))
    func everyPartCanBeOverridden() async throws {
        let folder = TemporaryFolder(), home = TemporaryFolder()
        let cache = try DiskCache(folder: folder.file("cache"), capacity: 1 << 20)
        let settings = InMemorySettingsStore([ImagePolicy.alwaysDownloadOriginalImage: .bool(false)])
        let network = FixedReachability(NetworkState(.cellular))
        let policyPath = try folder.write(#"""
            {"rules": [
              {"name": "thumbnail", "when": {"hasThumbnail": true}, "action": "load", "variant": "thumbnail", "reason": "the thumbnail"},
              {"name": "original", "action": "load", "variant": "original", "reason": "no thumbnail"}]}
            """#, to: "policy.json")
        let policy = try ImagePolicy.load(contentsOf: policyPath)
        let usage = DataUsageRecorder()
        // The test's own transport, shut down by the test when the closure ends.
        try await CurlTransport.withTransport { transport in
            let images = try ImageSystem(configuration: .init(
                policy: policy, network: .shared(network), settings: .shared(settings), diskCache: .shared(cache),
                memoryCapacity: 1 << 20, downloader: .shared(transport), usage: usage, environment: ["HOME": home.path]))

            #expect(images.transport == nil)
            #expect(images.pipeline.downloader as? CurlTransport === transport)
            #expect(images.pipeline.disk === cache)
            #expect(images.pipeline.memory.capacity == 1 << 20)
            #expect(images.reachability as? FixedReachability === network)
            #expect(images.settings as? InMemorySettingsStore === settings)
            #expect(images.loader.usage === usage)
            let event = await images.load(item)
            await images.shutdown()
            guard case .imageReady(let decision, .thumbnail, let fetched) = event else { Issue.record("\(event)"); return }
            #expect(decision.rule == "thumbnail")
            #expect(fetched.bytes == thumbnailImage)
            #expect(usage.usage.downloadedBytes() == thumbnailImage.count)

            // The shared parts stay the caller's: the transport still downloads after the system's shutdown.
            #expect(try await transport.download(item.original) == image)
        }
        // A given HOME holds nothing: every part came from the configuration.
        #expect(Self.tree(home.path).isEmpty)
    }

    @Test(.timeLimit(.minutes(2)))
    func shutdownIsIdempotentAndStopsWhatTheSystemMade() async throws {
        let home = TemporaryFolder()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))
        _ = await images.load(item)
        #expect(!images.isShutDown)
        // Several at once, then again: every call returns once the parts are down.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { await images.shutdown() } }
        }
        #expect(images.isShutDown)
        #expect(images.transport?.scheduler.hasStopped == true)
        #expect(images.transport?.scheduler.openHandles.load(ordering: .acquiring) == 0)
        await images.shutdown()
        await images.shutdown()
        #expect(images.isShutDown)
    }

    @Test(.timeLimit(.minutes(2)))
    func syncShutdownBlocksUntilThePartsAreDown() async throws {
        let home = TemporaryFolder()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))
        guard case .imageReady = await images.load(item) else { Issue.record("no image"); await images.shutdown(); return }
        // From a thread of its own, as the end of a synchronous `main` would call it.
        let stopped = await withCheckedContinuation { continuation in
            Thread {
                images.syncShutdown()
                continuation.resume(returning: images.transport?.scheduler.hasStopped == true)
            }.start()
        }
        #expect(stopped)
        #expect(images.isShutDown)
        // The disk write was flushed before it returned.
        #expect(try DiskCache(folder: home.path + "/.cache/imgpolicy").storedImage(for: item.original)?.bytes == image)
        await images.shutdown()   // and the async one after it returns at once
    }

    @Test(.timeLimit(.minutes(2)))
    func aLoadInFlightEndsWhenTheSystemShutsDown() async throws {
        let home = TemporaryFolder()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))
        let stuck = ImageItem(original: ImageURL(server.url("/hang.png"))!)
        let load = Task { await images.load(stuck) }
        #expect(await waitUntil { server.hits("/hang.png") == 1 })
        await images.shutdown()
        // Its transfer was cancelled by the transport's shutdown (a load started again then is refused).
        guard case .failed(_, let error, nil) = await load.value else { Issue.record("not failed"); return }
        #expect(error.code == .cancelled || error.code == .alreadyShutdown)
    }

    @Test(.timeLimit(.minutes(2)))
    func loadsAfterShutdownFailClearly() async throws {
        let home = TemporaryFolder()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))
        guard case .imageReady = await images.load(item) else { Issue.record("no image"); await images.shutdown(); return }
        #expect(images.pipeline.memory.containsImage(at: item.original))
        let loader = images.loader   // taken before the shutdown, as an app's slots hold it
        await images.shutdown()
        // A settings file damaged after the shutdown is never read: nothing is decided any more.
        try home.write("{ not json", to: ".config/imgpolicy/settings.json")

        // The system's own load, even of an image in memory: the shutdown, named, before any decision.
        guard case .failed(let decision, let error, nil) = await images.load(item) else { Issue.record("not failed"); return }
        #expect(decision.rule == "shutdown" && decision.action == .placeholder)
        #expect(error == FetchError(url: item.original, code: .alreadyShutdown))
        #expect(error.description.contains("shut down"))
        #expect(!error.isRemote)

        // A slot made with the loader: the same event, delivered.
        let events = LockedList<SlotEvent>()
        let slot = ImageSlot(loader: loader, deliveringOn: EventActor()) { events.append($0) }
        await slot.load(ImageItem(original: ImageURL(server.url("/thumbnail.png"))!)).value
        guard case .failed(_, let slotError, nil)? = events.values.first else { Issue.record("\(events.values)"); return }
        #expect(slotError.code == .alreadyShutdown)

        // The transport the system made refuses downloads as shut down, not as cancelled.
        await #expect(throws: FetchError(url: item.original, code: .alreadyShutdown)) {
            try await images.transport?.download(item.original)
        }
        #expect(server.hits("/thumbnail.png") == 0)
    }

    @Test(.timeLimit(.minutes(2)))
    func withNoUsableHomeTheDefaultCacheIsRefusedAndNothingIsCreated() async throws {
        let before = Self.outsideState()
        for environment in [[:], ["HOME": "relative/home"], ["HOME": "/nonexistent/imgpolicy-test"]] {
            let error = await #expect(throws: ImageSystemError.self) {
                try await Self.makeAndShutDown(.init(environment: environment.merging(["IMGPOLICY_NETWORK": "wifi"]) { $1 }))
            }
            #expect(error?.kind == .noCacheFolder)
            #expect(error?.message.contains("HOME") == true && error?.message.contains(".memoryOnly") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent/imgpolicy-test"))
        #expect(!FileManager.default.fileExists(atPath: "relative"))
        // Memory only, it works; the settings store has no values and writes nothing.
        let images = try ImageSystem(configuration: .init(diskCache: .memoryOnly, environment: ["IMGPOLICY_NETWORK": "wifi"]))
        #expect(images.pipeline.disk == nil)
        guard case .imageReady(_, _, let fetched) = await images.load(item) else { Issue.record("no image"); await images.shutdown(); return }
        #expect(fetched.bytes == image)
        await images.shutdown()
        #expect(Self.outsideState() == before)
    }

    @Test(.timeLimit(.minutes(2)))
    func anInvalidNetworkVariableOrCacheFolderIsAnErrorSayingWhatToDo() async throws {
        let home = TemporaryFolder()
        let invalid = await #expect(throws: ImageSystemError.self) {
            try await Self.makeAndShutDown(.init(environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "5g"]))
        }
        #expect(invalid?.kind == .invalidNetworkVariable)
        #expect(invalid?.message.contains("\"5g\"") == true && invalid?.message.contains(".fixed") == true)
        // Refused before anything was made: no cache folder under HOME.
        #expect(Self.tree(home.path).isEmpty)

        // A folder that is not a cache is refused, untouched.
        try home.write("mine", to: "not-a-cache/notes.txt")
        let notACache = await #expect(throws: ImageSystemError.self) {
            try await Self.makeAndShutDown(.init(diskCache: .folder(home.file("not-a-cache")),
                                                 environment: ["HOME": home.path, "IMGPOLICY_NETWORK": "wifi"]))
        }
        #expect(notACache?.kind == .cacheNotOpened)
        #expect(notACache?.message.contains(home.file("not-a-cache")) == true)
        #expect(try home.list("not-a-cache") == ["notes.txt"])
    }

    /// Makes a system with `configuration` and shuts it down (a test expecting an error must not
    /// leave a system running when there was none).
    static func makeAndShutDown(_ configuration: ImageSystem.Configuration) async throws {
        let images = try ImageSystem(configuration: configuration)
        await images.shutdown()
    }

    #if os(Linux)
    @Test(.timeLimit(.minutes(2)))
    func onLinuxTheNetworkIsFollowedByLinuxReachabilityWhichTheShutdownStops() async throws {
        let home = TemporaryFolder()
        let images = try ImageSystem(configuration: .init(environment: ["HOME": home.path]))
        #expect(String(describing: type(of: images.reachability)) == "LinuxReachability")
        let changes = images.reachability.stateChanges()
        await images.shutdown()
        // The provider's streams finish with its shutdown: this loop ends.
        for await _ in changes {}
    }
    #endif
}

/// The actor a test's slot delivers its events on.
private actor EventActor {}
