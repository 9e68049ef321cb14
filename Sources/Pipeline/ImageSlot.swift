import Policy
import Support
import Transport
import Caching
import Accounting
import HTTPSemantics

/// One place on screen that shows one image at a time: a table cell.
///
/// Every `load(_:)` first cancels the slot's previous load, whatever the new decision is: a
/// download, a cache hit or the placeholder (the last lesson of the SDWebImage article).
///
/// Delivery contract:
/// - Events are delivered on the main actor (or on the actor given to
///   `init(loader:deliveringOn:onEvent:)`), never while the slot holds a lock.
/// - There, just before the handler runs, the slot checks that the event's load is still its
///   current one. So once `cancel()` or a new `load(_:)` has returned on that actor, nothing of the
///   old load is ever delivered. (Calls made on other threads take effect as soon as they return,
///   but an event already past the check on the delivery actor may still arrive.)
/// - The handler may call `load(_:)` or `cancel()` on the same slot.
///
/// Thread safety: `load` and `cancel` may be called from any thread.
///
/// ```swift
/// let slot = ImageSlot(loader: loader) { event in   // runs on the main actor
///     cell.show(event)
/// }
/// slot.load(item)        // on reuse: slot.load(newItem) or slot.cancel()
/// slot.displayWidth = 600 // the cell is 300 points wide at scale 2: policies may load a thumbnail that covers it
/// ```
///
/// In use: the `Fetch` guides “Getting Started”, “Embedding in a List”.
public final class ImageSlot: Sendable {
    private let loader: ImageLoader
    private let current: CurrentLoad<SlotEvent>
    // Guards the display width.
    private let width = Locked<Int?>(nil)

    /// Creates a slot that reports to `onEvent` on the main actor.
    public convenience init(loader: ImageLoader, onEvent: @escaping @MainActor @Sendable (SlotEvent) -> Void) {
        self.init(loader: loader, deliveringOn: MainActor.shared) { event in
            MainActor.assumeIsolated { onEvent(event) }
        }
    }

    /// Creates a slot that reports to `onEvent` isolated to `actor` (the handler may use
    /// `actor.assumeIsolated` to reach the actor's state).
    public init(loader: ImageLoader, deliveringOn actor: any Actor, onEvent: @escaping @Sendable (SlotEvent) -> Void) {
        self.loader = loader
        current = CurrentLoad(deliveringOn: actor, onEvent: onEvent)
    }

    /// The slot's width on screen in pixels (points × scale; nil, the default: unknown). Every
    /// later `load(_:)` decides with it, so that a policy testing `thumbnailCoversDisplay` (the
    /// bundled `thumbnail-when-enough`) loads the thumbnail when it is at least this wide (see
    /// `ImageItem.thumbnailCovers(displayWidth:)`). Setting it does not load again.
    public var displayWidth: Int? {
        get { width.withLock { $0 } }
        set { width.withLock { $0 = newValue } }
    }

    /// Cancels the previous load, decides for `item`, and carries the decision out.
    /// - Returns: the loading task, which ends after its event was delivered or dropped (to await
    ///   in tests and scripts; cancelling it is like `cancel()`).
    @discardableResult
    public func load(_ item: ImageItem) -> Task<Void, Never> {
        let loader = sizedLoader
        return current.start {
            if let ended = loader.shutdownEvent(for: item) { return ended }
            do throws(DataFileError) {
                return await loader.load(item, decision: try loader.decide(item))
            } catch {
                return .decisionFailed(error)
            }
        }
    }

    /// Cancels the previous load and carries out `decision`, made elsewhere for `item` (by a
    /// list deciding for many rows, or a tool that printed it). A "show cached" decision whose
    /// cached copy proves unreadable is still made again.
    @discardableResult
    public func load(_ item: ImageItem, decision: Decision) -> Task<Void, Never> {
        let loader = sizedLoader
        return current.start { await loader.load(item, decision: decision) }
    }

    /// Sets `displayWidth`, then loads `item` as `load(_:)` does: the shape for a cell whose size
    /// changes with the item.
    ///
    /// ```swift
    /// slot.load(item, displayWidth: Int(cell.bounds.width * screen.scale))
    /// ```
    @discardableResult
    public func load(_ item: ImageItem, displayWidth: Int?) -> Task<Void, Never> {
        self.displayWidth = displayWidth
        return load(item)
    }

    /// The loader, deciding (and deciding again) for the slot's display width.
    private var sizedLoader: ImageLoader {
        var loader = self.loader
        loader.displayWidth = displayWidth
        return loader
    }

    /// Cancels the current load; nothing more is delivered for it.
    public func cancel() {
        current.cancel()
    }
}
