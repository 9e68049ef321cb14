import Fetch
import Foundation
import LinuxNetwork
import Policy

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

// One slot per table cell: each load cancels the slot's previous one.
let slot = ImageSlot(loader: loader) { event in
    switch event {
    case .placeholder: print("placeholder")
    case .imageReady(_, let variant, let image): print("\(variant): \(image.bytes.count) bytes from \(image.source)")
    case .failed(_, let error, let fallback): print("\(error); showing \(fallback == nil ? "the placeholder" : "the cached thumbnail")")
    case .decisionFailed(let error): print(error)
    }
}
let item = ImageItem(id: "42", original: ImageURL("https://example.com/42.jpg")!,
                     thumbnail: ImageURL("https://example.com/42-small.jpg"))
await slot.load(item).value
await pipeline.flush()          // disk-cache writes finish in the background
await transport.shutdown()
await reachability.shutdown()   // the netlink listener
