import Policy
import Pipeline
import Transport
import Caching
import Accounting
import HTTPSemantics

/// What an `ImageList` reports for one row, always with the row and the item it was for.
///
/// ```swift
/// let list = ImageList(loader: loader) { event in
///     guard let cell = table.visibleCell(at: event.row) else { return }
///     switch event {
///     case .placeholder, .decisionFailed: cell.showPlaceholder()
///     case .imageReady(_, _, _, _, let image), .upgraded(_, _, _, _, let image): cell.show(image.bytes)
///     case .failed(_, _, _, _, let fallback): cell.show(fallback?.bytes)
///     }
/// }
/// ```
public enum RowEvent: Sendable {
    /// Show the placeholder: the decision says so, or the row's download waits (the user flings)
    /// and nothing of it is cached.
    case placeholder(row: Int, item: ImageItem, decision: Decision)
    /// The row's first image: the variant, its bytes and where they came from.
    case imageReady(row: Int, item: ImageItem, decision: Decision, variant: Variant, image: FetchedImage)
    /// A better variant replaces the one shown (delivered only after it has fully arrived).
    case upgraded(row: Int, item: ImageItem, decision: Decision, variant: Variant, image: FetchedImage)
    /// The row's load failed and nothing is shown for it: the error, and the widest cached image
    /// of the item narrower than the one that failed (its cached thumbnail, for an item without a
    /// ladder) to show if there is one (nil: the placeholder).
    case failed(row: Int, item: ImageItem, decision: Decision, error: FetchError, fallback: FetchedImage?)
    /// The decision itself failed (the settings could not be read): show the placeholder.
    case decisionFailed(row: Int, item: ImageItem, error: DataFileError)

    /// The row the event is for.
    public var row: Int {
        switch self {
        case .placeholder(let row, _, _), .imageReady(let row, _, _, _, _), .upgraded(let row, _, _, _, _),
             .failed(let row, _, _, _, _), .decisionFailed(let row, _, _):
            return row
        }
    }

    /// The item the event is for.
    public var item: ImageItem {
        switch self {
        case .placeholder(_, let item, _), .imageReady(_, let item, _, _, _), .upgraded(_, let item, _, _, _),
             .failed(_, let item, _, _, _), .decisionFailed(_, let item, _):
            return item
        }
    }

    /// The variant shown after this event, if an image is (the fallback thumbnail of a failure
    /// included); nil for the placeholder.
    public var shownVariant: Variant? {
        switch self {
        case .imageReady(_, _, _, let variant, _), .upgraded(_, _, _, let variant, _): return variant
        case .failed(_, _, _, _, let fallback): return fallback == nil ? nil : .thumbnail
        case .placeholder, .decisionFailed: return nil
        }
    }
}
