import Fetch
import Support
import Policy

/// One place on screen that shows one decoded image at a time, at its display size: an
/// `ImageSlot` whose images come as pixels (`DecodedImage`), through a `PixelLoader` (its
/// `PixelCache`, then its `DecodingQueue`).
///
/// The display size decides too: its width goes to the policy (`ImageSlot.displayWidth`), so a
/// policy testing `thumbnailCoversDisplay` loads a thumbnail that covers the slot.
///
/// Delivery contract (as `ImageSlot`'s): every `load(_:)` first cancels the previous load, its
/// download and its decode; events are delivered on the main actor (or the actor given to
/// `init(loader:pixels:displaySize:deliveringOn:onEvent:)`) with no lock held, each checked just
/// before its handler runs: once `load(_:)` or `cancel()` has returned on that actor, nothing of
/// the old load, not even a decode already running, is delivered.
///
/// Thread safety: every method may be called from any thread.
///
/// ```swift
/// let pixels = PixelLoader(cache: PixelCache(costLimit: 64 << 20))
/// let slot = PixelSlot(loader: loader, pixels: pixels, displaySize: TargetSize(width: 600, height: 400)) { event in
///     if case .imageReady(_, _, let image, _) = event { cell.show(image) }   // RGBA8 at most 600×400
/// }
/// slot.load(item)        // on reuse: slot.load(newItem) or slot.cancel()
/// ```
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public final class PixelSlot: Sendable {
    private let loader: ImageLoader
    private let pixels: PixelLoader
    private let current: CurrentLoad<PixelSlotEvent>
    // Guards the display size.
    private let size: Locked<TargetSize>

    /// Creates a slot of `displaySize` pixels (points × scale) that reports on the main actor.
    public convenience init(loader: ImageLoader, pixels: PixelLoader, displaySize: TargetSize,
                            onEvent: @escaping @MainActor @Sendable (PixelSlotEvent) -> Void) {
        self.init(loader: loader, pixels: pixels, displaySize: displaySize, deliveringOn: MainActor.shared) { event in
            MainActor.assumeIsolated { onEvent(event) }
        }
    }

    /// Creates a slot of `displaySize` pixels that reports to `onEvent` isolated to `actor`.
    public init(loader: ImageLoader, pixels: PixelLoader, displaySize: TargetSize, deliveringOn actor: any Actor,
                onEvent: @escaping @Sendable (PixelSlotEvent) -> Void) {
        self.loader = loader
        self.pixels = pixels
        current = CurrentLoad(deliveringOn: actor, onEvent: onEvent)
        size = Locked(displaySize)
    }

    /// The size images are decoded to (and whose width the policy decides with) by the next
    /// `load(_:)`; setting it does not load again.
    public var displaySize: TargetSize {
        get { size.withLock { $0 } }
        set { size.withLock { $0 = newValue } }
    }

    /// Cancels the previous load (download and decode), decides for `item` with the display
    /// width, loads, and decodes to the display size.
    /// - Returns: the loading task, which ends after its event was delivered or dropped.
    @discardableResult
    public func load(_ item: ImageItem) -> Task<Void, Never> {
        let (loader, pixels, size) = (self.loader, self.pixels, displaySize)
        return current.start {
            var sized = loader
            sized.displayWidth = size.width
            do throws(DataFileError) {
                let decision = try sized.decide(item)
                let loaded = await sized.load(item, decision: decision)
                let event = await Self.decoded(loaded, pixels: pixels, size: size, pipeline: sized.pipeline)
                // Cached bytes that did not decode were removed: decide and load once more
                // (fetched again where the network allows, else the fallback).
                guard case .decodingFailed(_, _, _, let error)? = event, error.meansDamagedBytes,
                      case .imageReady(_, _, let image) = loaded, image.source != .network, !Task.isCancelled else { return event }
                return await Self.decoded(await sized.load(item, decision: try sized.decide(item)), pixels: pixels, size: size,
                                          pipeline: sized.pipeline)
            } catch {
                return .decisionFailed(error)
            }
        }
    }

    /// Cancels the current load and its decode; nothing more is delivered for it.
    public func cancel() {
        current.cancel()
    }

    /// The event with its images decoded to `size` (a cancelled decode gives nil: nothing to
    /// deliver). Bytes that are damaged or no image (`DecodingError.meansDamagedBytes`) are removed
    /// from `pipeline`'s caches (`ImagePipeline.discardUndecodable`): a fallback that does not
    /// decode is then no fallback. An image refused as too large, or a codec missing, is kept.
    static func decoded(_ event: SlotEvent, pixels: PixelLoader, size: TargetSize, pipeline: ImagePipeline) async -> PixelSlotEvent? {
        switch event {
        case .placeholder(let decision):
            return .placeholder(decision)
        case .decisionFailed(let error):
            return .decisionFailed(error)
        case .imageReady(let decision, let variant, let image):
            do throws(DecodingError) {
                let decoded = try await pixels.image(for: image, at: size)
                return .imageReady(decision, variant: variant, image: decoded, source: image.source)
            } catch {
                guard error.kind != .cancelled else { return nil }
                if error.meansDamagedBytes { await pipeline.discardUndecodable(image.url) }
                return .decodingFailed(decision, variant: variant, url: image.url, error: error)
            }
        case .failed(let decision, let error, let fallback):
            var decoded: DecodedImage?
            if let fallback {
                do throws(DecodingError) {
                    decoded = try await pixels.image(for: fallback, at: size)
                } catch where error.meansDamagedBytes {
                    await pipeline.discardUndecodable(fallback.url)
                } catch {}
                if Task.isCancelled { return nil }
            }
            return .failed(decision, error: error, fallback: decoded)
        }
    }
}
