import Support
import Synchronization
import HTTPSemantics

/// A load's priority, shared between whoever asked for the load and the transport, which reads it
/// each time it chooses the next transfer to start: changing it reorders a transfer still waiting
/// (a row scrolled onto the screen overtakes prefetching), and has no effect on one running.
///
/// Thread safety: read and set from any thread.
///
/// In use: the `Fetch` guide “Embedding in a List”.
public final class RequestPriority: Sendable {
    private struct State {
        var value: LoadPriority
        /// The queues holding a transfer with this priority, told of each change.
        var watchers: [PriorityChanges] = []
    }

    // Guards the value and its watchers; `urgencyState` is written under it too, so that both
    // always agree.
    private let state: Locked<State>
    // The value as one number, read without a lock by the transport's queue.
    private let urgencyState: Atomic<Int64>

    /// Creates a priority holding `value`.
    public init(_ value: LoadPriority = .visible) {
        state = Locked(State(value: value))
        urgencyState = Atomic(Self.urgency(of: value))
    }

    /// The priority now.
    public var value: LoadPriority {
        get { state.withLock { $0.value } }
        set {
            state.withLock { state in
                state.value = newValue
                urgencyState.store(Self.urgency(of: newValue), ordering: .releasing)
                for watcher in state.watchers { watcher.note() }
            }
        }
    }

    /// Has `changes` counted each later change of the value (once per queue, however many
    /// times it is asked). Call it before reading `urgency`, so that no change goes unnoticed.
    func watch(_ changes: PriorityChanges) {
        state.withLock { state in
            if !state.watchers.contains(where: { $0 === changes }) { state.watchers.append(changes) }
        }
    }

    /// The priority now as one number: greater is more urgent, in `LoadPriority`'s order (orders
    /// beyond ±2^40, which no list has, count as ±2^40).
    var urgency: Int64 {
        urgencyState.load(ordering: .acquiring)
    }

    static func urgency(of priority: LoadPriority) -> Int64 {
        let bound: Int64 = 1 << 40
        let order = min(max(Int64(clamping: priority.order), -bound), bound)
        return Int64(priority.tier.rawValue) * (4 * bound) - order
    }
}
