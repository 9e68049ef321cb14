import Fetch
import Policy

/// What a simulation drives: the SDK's list (through an adapter) or the naive baseline. Every
/// call is made on the main actor, where deliveries are also made (to `Screen`).
@MainActor
package protocol SimulatedList: AnyObject {
    /// A short name for the report (`ImageList`, `naive`).
    var name: String { get }
    /// Starts the list over `items`, following the network from now on.
    func start(items: [ImageItem])
    /// The rows on screen now; `screen` has bound them to cells already.
    func setVisibleRows(_ rows: Range<Int>)
    /// The user's gesture changed; for a fling, `landing` is the rows on screen where it stops.
    func setGesture(_ gesture: ScrollPlan.Gesture, landing: Range<Int>?)
    /// The variant the list delivered for `row` while it was off screen (a near or fling-target
    /// row) and still stands by: what an app keeps in its model and shows when the row's cell
    /// appears (`cellForRowAt`). nil: nothing.
    func keptVariant(row: Int) -> Variant?
    /// The width in pixels of that kept image, when the item says it (a ladder's rung).
    func keptWidth(row: Int) -> Int?
    /// Stops: nothing more may be delivered after this returns.
    func stop() async
    /// The list's own counters, for the report (nil: none).
    var statistics: String? { get }
}

extension SimulatedList {
    /// No width known: lists that keep nothing, or keep images of unknown width.
    package func keptWidth(row: Int) -> Int? { nil }
}

/// What a list delivers to the screen.
package struct Delivery: Sendable {
    /// Where the list sends it: to a row (the SDK) or to the cell it captured (the naive list).
    package enum Target: Sendable, Equatable {
        case row(Int)
        case cell(Int)
    }

    package enum Content: Sendable {
        /// The placeholder (nothing to load, or nothing cached offline).
        case placeholder
        /// An image: the first for the row.
        case image(Variant, url: ImageURL, bytes: [UInt8])
        /// A better image replacing the shown one.
        case upgrade(Variant, url: ImageURL, bytes: [UInt8])
        /// The load failed: whether it was reported as cancelled, why, and the fallback if any.
        case failed(cancelled: Bool, error: FetchError?, fallback: (Variant, url: ImageURL, bytes: [UInt8])?)
    }

    package var target: Target
    /// The item the list says it is for.
    package var item: ImageItem
    package var content: Content
    /// Whether the image came from the network (not from a cache).
    package var fromNetwork = false
}
