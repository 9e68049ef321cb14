import Synchronization
import HTTPSemantics
import Support

/// Counts the changes of the priorities a `TransferQueue` holds: each `RequestPriority` of a
/// waiting transfer bumps the count of every queue watching it when it is set, so that a choice
/// reads the priorities again only when one has changed since the last choice.
///
/// Thread safety: bumped from any thread (whoever sets a priority), read by the queue's owner.
final class PriorityChanges: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// One more change.
    func note() {
        counter.add(1, ordering: .releasing)
    }

    /// The changes so far.
    var count: UInt64 {
        counter.load(ordering: .acquiring)
    }
}
