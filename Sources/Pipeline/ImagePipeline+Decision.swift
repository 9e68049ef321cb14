import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics
import Support

extension ImagePipeline {
    /// Carries out `decision` for `item`: the placeholder, or the image from the caches or the
    /// network. A decision to show a cached variant, or any decision made offline, never touches
    /// the network. On failure, the widest cached image of the item narrower than the one that
    /// failed (for an item without a ladder: the cached thumbnail when the original failed), else
    /// the placeholder, comes with the error.
    ///
    /// A cached variant that proves unreadable (damaged, evicted, removed by another process) is
    /// `.offline` only when the decision was made offline; else `.localIO`. `ImageLoader` does
    /// better: it decides again with the cache as it now is.
    ///
    /// `priority` is the load's priority (a new `.visible` one when nil); change it while the load
    /// runs with `setPriority(_:of:)`.
    public func load(_ item: ImageItem, decision: Decision, priority: RequestPriority? = nil) async -> SlotEvent {
        let variant: Variant, url: ImageURL, networkAllowed: Bool
        switch decision.action {
        case .placeholder:
            return .placeholder(decision)
        case .showCached(let cachedVariant, let cachedURL):
            (variant, url, networkAllowed) = (cachedVariant, cachedURL, false)
        case .load(let loadVariant, let loadURL):
            (variant, url, networkAllowed) = (loadVariant, loadURL, decision.network.kind != .offline)
        }
        do {
            let image = try await image(for: url, networkAllowed: networkAllowed, mayRevalidate: decision.network.kind != .offline,
                                        priority: priority, network: decision.network, variant: variant)
            return .imageReady(decision, variant: variant, image: image)
        } catch {
            var error = error
            if error.code == .offline, decision.network.kind != .offline {
                error = FetchError(url: url, code: .localIO(message: Self.cachedCopyLost))
            }
            // The widest cached image of the item narrower than the one that failed (the cached
            // thumbnail of an item without a ladder, when the original failed).
            var fallback: FetchedImage?
            if error.code != .cancelled {
                for narrower in item.narrowerImages(than: url) {
                    if let image = await cachedImage(for: narrower) {
                        fallback = image
                        break
                    }
                }
            }
            return .failed(decision, error: error, fallback: fallback)
        }
    }
}

extension ImagePipeline {
    /// Why a "show cached" decision found nothing to show.
    static let cachedCopyLost = "the cached copy is gone or unreadable (evicted, damaged or removed meanwhile)"
}
