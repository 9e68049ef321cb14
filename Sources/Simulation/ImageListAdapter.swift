import Fetch
import Policy

/// The SDK's side of a simulation: an `ImageList` driven as an app drives it from its table
/// view, its events handed to the screen as they arrive on the main actor.
@MainActor
package final class ImageListAdapter: SimulatedList {
    package let name = "ImageList"
    private let list: ImageList

    /// `displayWidth`: every row's width in pixels, as an app sets it from its table (nil: unknown).
    package init(loader: ImageLoader, screen: Screen, displayWidth: Int? = nil) {
        list = ImageList(loader: loader) { event in screen.deliver(Self.delivery(event)) }
        list.setDisplayWidth(displayWidth)
    }

    package var statistics: String? { list.statistics.description }

    package func start(items: [ImageItem]) {
        list.setItems(items)
        list.start()
    }

    package func setVisibleRows(_ rows: Range<Int>) {
        list.setVisibleRows(rows)
    }

    package func setGesture(_ gesture: ScrollPlan.Gesture, landing: Range<Int>?) {
        switch gesture {
        case .idle: list.setScrollPhase(.idle)
        case .dragging: list.setScrollPhase(.dragging)
        case .flinging:
            // As UIKit reports it: the target in willEndDragging, then the deceleration.
            if let landing { list.setFlingTarget(landing) }
            list.setScrollPhase(.flinging)
        }
    }

    package func keptVariant(row: Int) -> Variant? {
        list.shownVariant(row: row)
    }

    package func keptWidth(row: Int) -> Int? {
        list.shownWidth(row: row)
    }

    package func stop() async {
        list.stop()
    }

    package static func delivery(_ event: RowEvent) -> Delivery {
        let content: Delivery.Content
        var fromNetwork = false
        switch event {
        case .placeholder, .decisionFailed:
            content = .placeholder
        case .imageReady(_, _, _, let variant, let image):
            content = .image(variant, url: image.url, bytes: image.bytes)
            fromNetwork = image.source == .network
        case .upgraded(_, _, _, let variant, let image):
            content = .upgrade(variant, url: image.url, bytes: image.bytes)
            fromNetwork = image.source == .network
        case .failed(_, _, _, let error, let fallback):
            content = .failed(cancelled: error.code == .cancelled, error: error, fallback: fallback.map { (.thumbnail, $0.url, $0.bytes) })
        }
        return Delivery(target: .row(event.row), item: event.item, content: content, fromNetwork: fromNetwork)
    }
}
