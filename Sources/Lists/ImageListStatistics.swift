import Pipeline
import Transport
import Caching
import Accounting
import HTTPSemantics
/// What an `ImageList` did so far: for tests, the command and benchmarks.
///
/// ```swift
/// let figures = list.statistics
/// print("\(figures.loadsStarted) loads, \(figures.upgrades) upgrades, \(figures.staleDropped) stale dropped")
/// ```
public struct ImageListStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Loads started for rows (cache reads and downloads; prefetches included).
    public var loadsStarted = 0
    /// Of those, loads that could download (their variant was not cached when they started).
    public var networkLoadsStarted = 0
    /// Loads cancelled: the row's item changed, it left the near range or the plan, a new
    /// decision no longer wanted it, the network went offline, or `stop()`.
    public var loadsCancelled = 0
    /// Running loads kept although a new decision would not start them (the policy lets running
    /// loads finish when the network gets worse).
    public var loadsLetFinish = 0
    /// `.upgraded` events delivered.
    public var upgrades = 0
    /// Prefetch loads started (rows beyond the near range, within the policy's prefetch plan).
    public var prefetches = 0
    /// Times a row's download was held because the user was flinging (or dragging, for rows off
    /// screen): once per row and change of the list while it waits.
    public var deferredWhileScrolling = 0
    /// Events delivered to the handler.
    public var deliveries = 0
    /// Events of loads that ended but whose row had moved on meanwhile (a newer load, another
    /// item, out of the near range, or the list stopped), dropped on the delivery actor. A
    /// cancelled load delivers nothing and is not counted here.
    public var staleDropped = 0
    /// Images dropped because the row already showed a variant as good or better (a late
    /// thumbnail after the original).
    public var worseDropped = 0
    /// Times the visible and near rows were decided again after a network or settings change.
    public var redecisions = 0

    /// Creates zero counts.
    public init() {}

    /// One line with every count.
    public var description: String {
        "loads \(loadsStarted) (network \(networkLoadsStarted)), cancelled \(loadsCancelled), let finish \(loadsLetFinish), "
            + "upgrades \(upgrades), prefetches \(prefetches), deferred \(deferredWhileScrolling), delivered \(deliveries), "
            + "stale dropped \(staleDropped), worse dropped \(worseDropped), redecisions \(redecisions)"
    }
}
