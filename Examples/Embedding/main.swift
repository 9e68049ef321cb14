import Foundation
import Policy

let policy = try ImagePolicy.load(contentsOf: "policies/low-data.json")   // or ImagePolicy.default
let settings = FileSettingsStore(path: FileSettingsStore.defaultPath(environment: ProcessInfo.processInfo.environment))
let reachability = LinuxReachability()                                     // or FixedReachability(NetworkState(.wifi))
let item = ImageItem(id: "42", original: ImageURL("https://example.com/42.jpg")!,
                     thumbnail: ImageURL("https://example.com/42-small.jpg"))
let decision = try policy.decide(item, network: reachability.currentState, settings: settings,
                                 cache: StaticCacheContents.empty)
switch decision.action {
case .showCached(let variant, let url): print("show cached \(variant) \(url)")
case .load(let variant, let url): print("load \(variant) from \(url)")
case .placeholder: print("placeholder")
}
