import Pipeline
import Transport
import Caching
import Accounting
import HTTPSemantics
/// What the user is doing with the list, as the app's scroll view reports it.
///
/// ```swift
/// func scrollViewWillBeginDragging(_ view: UIScrollView) { list.setScrollPhase(.dragging) }
/// func scrollViewDidEndDecelerating(_ view: UIScrollView) { list.setScrollPhase(.idle) }
/// ```
public enum ScrollPhase: Sendable, Hashable {
    /// Nothing moves: every row the plan covers may load (visible rows first).
    case idle
    /// The user's finger moves the list: visible rows may start downloads; near and prefetch rows wait.
    case dragging
    /// The list moves on its own after the finger left: no download starts (rows would be gone
    /// before it arrived), except for the rows where the fling stops, when the app gives them
    /// (`ImageList.setFlingTarget(_:)`); cache hits are still delivered at once.
    case flinging
}
