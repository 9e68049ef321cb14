import Policy
import Locking

/// One place on screen that shows one image at a time: a table cell.
///
/// Every `load(_:)` first cancels the slot's previous load, whatever the new decision is: a
/// download, a cache hit or the placeholder (the last lesson of the SDWebImage article). A result
/// that belongs to a superseded load is never delivered: events are delivered under the slot's
/// lock, and only while their load is the current one.
///
/// `onEvent` runs on the loading task, under that lock: keep it short (hop to the main actor to
/// touch UI) and do not call back into the same slot from inside it.
///
/// Thread safety: `load` and `cancel` may be called from any thread.
public final class ImageSlot: Sendable {
    private struct State {
        var generation = 0
        var task: Task<Void, Never>?
    }

    private let loader: ImageLoader
    private let onEvent: @Sendable (SlotEvent) -> Void
    // Guards the current generation and its task; events are delivered while holding it.
    private let state = Locked(State())

    /// Creates a slot that reports to `onEvent`.
    public init(loader: ImageLoader, onEvent: @escaping @Sendable (SlotEvent) -> Void) {
        self.loader = loader
        self.onEvent = onEvent
    }

    /// Cancels the previous load, decides for `item`, and carries the decision out.
    /// - Returns: the loading task (to await in tests and scripts; cancelling it is `cancel()`).
    @discardableResult
    public func load(_ item: ImageItem) -> Task<Void, Never> {
        let loader = self.loader
        return state.withLock { state in
            state.task?.cancel()
            state.generation += 1
            let generation = state.generation
            let task = Task { [self] in
                let event: SlotEvent
                do throws(DataFileError) {
                    let decision = try loader.decide(item)
                    event = await loader.load(item, decision: decision)
                } catch {
                    event = .decisionFailed(error)
                }
                deliver(event, generation: generation)
            }
            state.task = task
            return task
        }
    }

    /// Cancels the current load; nothing more is delivered for it.
    public func cancel() {
        state.withLock { state in
            state.task?.cancel()
            state.task = nil
            state.generation += 1
        }
    }

    private func deliver(_ event: SlotEvent, generation: Int) {
        state.withLock { state in
            guard state.generation == generation, !Task.isCancelled else { return }
            onEvent(event)
        }
    }
}
