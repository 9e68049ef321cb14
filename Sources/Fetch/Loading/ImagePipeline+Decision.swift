import Policy

extension ImagePipeline {
    /// Carries out `decision` for `item`: the placeholder, or the image from the caches or the
    /// network. A decision to show a cached variant, or any decision made offline, never touches
    /// the network. On failure, the cached thumbnail if there is one (else the placeholder) comes
    /// with the error.
    public func load(_ item: ImageItem, decision: Decision) async -> SlotEvent {
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
            let image = try await image(for: url, networkAllowed: networkAllowed)
            return .imageReady(decision, variant: variant, image: image)
        } catch {
            var fallback: FetchedImage?
            if error.code != .cancelled, variant == .original, let thumbnail = item.thumbnail {
                fallback = try? await image(for: thumbnail, networkAllowed: false)
            }
            return .failed(decision, error: error, fallback: fallback)
        }
    }
}
