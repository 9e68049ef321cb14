import Support
import Transport
import Caching
import Accounting
import HTTPSemantics

/// The one current load of a place on screen, and the check that keeps the others out: each
/// `start(_:)` cancels the previous load's task, and each event is checked on the delivery actor,
/// just before the handler runs, against the load that is current then. `ImageSlot` is built on
/// it; so is a slot of another module that delivers other events (`Decoding`'s `PixelSlot`).
///
/// Contract: once `start(_:)` or `cancel()` has returned on the delivery actor, nothing of an
/// earlier load is delivered. The handler runs isolated to the actor with no lock held, and may
/// call `start(_:)` or `cancel()`.
///
/// ```swift
/// let current = CurrentLoad<String>(deliveringOn: MainActor.shared) { text in print(text) }
/// current.start { await fetchTitle() }          // an earlier title, if still loading, is never printed
/// ```
///
/// Thread safety: `start` and `cancel` may be called from any thread.
public final class CurrentLoad<Event: Sendable>: Sendable {
    private struct State {
        var generation = 0
        var task: Task<Void, Never>?
    }

    private let deliveryActor: any Actor
    /// Runs isolated to `deliveryActor`.
    private let onEvent: @Sendable (Event) -> Void
    // Guards the current generation and its task; never held while the handler runs.
    private let state = Locked(State())

    /// Delivers each current load's event to `onEvent`, isolated to `actor`.
    public init(deliveringOn actor: any Actor, onEvent: @escaping @Sendable (Event) -> Void) {
        deliveryActor = actor
        self.onEvent = onEvent
    }

    /// Cancels the previous load and runs `work` as the current one; its event (nil: nothing to
    /// deliver) is delivered if the load is still current then.
    /// - Returns: the load's task, which ends after its event was delivered or dropped.
    @discardableResult
    public func start(_ work: @escaping @Sendable () async -> Event?) -> Task<Void, Never> {
        let (task, previous) = state.withLock { state -> (Task<Void, Never>, Task<Void, Never>?) in
            state.generation += 1
            let generation = state.generation
            let task = Task { [self] in
                guard let event = await work() else { return }
                await deliver(event, generation: generation, on: deliveryActor)
            }
            defer { state.task = task }
            return (task, state.task)
        }
        previous?.cancel()
        return task
    }

    /// Cancels the current load; nothing more is delivered for it.
    public func cancel() {
        let previous = state.withLock { state -> Task<Void, Never>? in
            state.generation += 1
            defer { state.task = nil }
            return state.task
        }
        previous?.cancel()
    }

    /// Runs on the delivery actor: the check and the handler, with no lock held by the handler.
    private func deliver(_ event: Event, generation: Int, on actor: isolated any Actor) {
        let isCurrent = state.withLock { $0.generation == generation }
        guard isCurrent, !Task.isCancelled else { return }
        onEvent(event)
    }
}
