import Accounting
import Caching
import Policy
import Support

/// The pipeline's events counted by the recorder (the recorder lives in `Accounting`, which knows
/// nothing of loads).
extension DataUsageRecorder {
    /// Counts one load's event (`ImageLoader` calls it once per load). `cache` answers whether
    /// the item's original is cached.
    public func record(_ event: SlotEvent, for item: ImageItem, cache: any CacheInspecting) {
        var change = DataUsage()
        var shownVariant: Variant?
        let decision: Decision
        switch event {
        case .imageReady(let made, let variant, let image):
            decision = made
            // A resumed download received the rest only: the part it kept was counted when it arrived.
            let bytes = image.source == .network ? image.bytes.count - min(image.resumedBytes, image.bytes.count) : image.bytes.count
            change.add(.init(bytes: bytes, transfers: 1),
                       for: .init(link: .init(made.network), variant: variant, source: image.source, width: item.width(of: image.url)))
            change.addRetries(image.retries, on: .init(made.network))
            change.addResumedBytes(image.resumedBytes, on: .init(made.network))
            change.addFailedBytes(image.failedBytes, on: .init(made.network))
            shownVariant = variant
        case .failed(let made, let error, let fallback):
            decision = made
            change.addRetries(max(1, error.attempts) - 1, on: .init(made.network))
            // A cancelled transfer's bytes are counted by the pipeline (see the type's documentation).
            if error.code != .cancelled { change.addFailedBytes(error.receivedBytes, on: .init(made.network)) }
            if let fallback {
                change.add(.init(bytes: fallback.bytes.count, transfers: 1),
                           for: .init(link: .init(made.network), variant: .thumbnail, source: fallback.source, width: item.width(of: fallback.url)))
            }
        case .placeholder(let made):
            decision = made
        case .decisionFailed:
            return
        }
        let link = DataUsage.Link(decision.network)
        var heldBack: Int?
        let couldDownload = decision.network.kind != .offline && !decision.network.isCaptive
        // A decision for the thumbnail or the placeholder (a failed original is not the policy's doing).
        if couldDownload, decision.variant != .original, shownVariant != .original, !cache.containsImage(at: item.original) {
            heldBack = item.original.hashValue
        }
        apply { state in
            if let heldBack, state.heldBack.insert(heldBack).inserted {
                change.addOriginalsNotDownloaded(1, on: link)
            }
            return change
        }
    }
}
