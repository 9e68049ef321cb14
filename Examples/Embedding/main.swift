import Fetch
import Policy

// One line: the built-in policy, the network (LinuxReachability on Linux), the settings file
// `imgpolicy settings set` writes, libcurl, a memory cache and the disk cache in ~/.cache/imgpolicy.
let images = try ImageSystem()   // or ImageSystem(configuration: .init(policy: …, diskCache: .folder(…)))

// One slot per table cell: each load cancels the slot's previous one.
let slot = ImageSlot(loader: images.loader) { event in
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
await images.shutdown()   // the transport, then the disk-cache writes, then the network listener
