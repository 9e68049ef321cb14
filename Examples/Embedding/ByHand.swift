import Fetch
import Foundation
import LinuxNetwork
import Policy

/// What `ImageSystem()` makes, part by part, for an app that wires its own.
func loadWithPartsMadeByHand(_ item: ImageItem) async throws {
    let environment = ProcessInfo.processInfo.environment
    // The policy (ImagePolicy.default is built in), the network, the user's settings.
    let policy = try ImagePolicy.load(contentsOf: "policies/low-data.json")
    let reachability = try LinuxReachability()              // or FixedReachability(NetworkState(.wifi))
    let settings = FileSettingsStore.atDefaultLocation(environment: environment)   // no usable HOME: no values, writes refused
    // The fetcher: libcurl underneath, a memory cache and a disk cache.
    let transport = CurlTransport(configuration: .standard)
    let pipeline = ImagePipeline(downloader: transport, memory: MemoryCache(capacity: 64 << 20),
                                 disk: try DiskCache(folder: DiskCache.defaultFolder(environment: environment)))
    let loader = ImageLoader(policy: policy, reachability: reachability, settings: settings, pipeline: pipeline)

    print(await loader.load(item, decision: try loader.decide(item)))
    // Three parts to shut down, in this order.
    await transport.shutdown()      // transfers in flight end
    await pipeline.flush()          // disk-cache writes finish in the background
    await reachability.shutdown()   // the netlink listener
}
