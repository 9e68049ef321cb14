import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics

extension ImageLoader {
    /// Carries out `decision` as `load(_:decision:)` does, at `priority`: keep it to change the
    /// load's priority while it runs, with `setPriority(_:of:)` (a list moves a row's load from
    /// prefetch to visible so). Nil is a new `.visible` priority.
    ///
    /// ```swift
    /// let priority = RequestPriority(LoadPriority(.prefetch, order: 4))
    /// let load = Task { await loader.load(item, decision: decision, priority: priority) }
    /// loader.setPriority(LoadPriority(.visible, order: 0), of: priority)   // its row came on screen
    /// ```
    public func load(_ item: ImageItem, decision: Decision, priority: RequestPriority?) async -> SlotEvent {
        var loader = self
        loader.requestPriority = priority
        return await loader.load(item, decision: decision)
    }

    /// Sets `priority` (given to `load(_:decision:priority:)`) to `value`: the pipeline's shared
    /// load, and the transport's queue, take it into account at once.
    public func setPriority(_ value: LoadPriority, of priority: RequestPriority) {
        pipeline.setPriority(value, of: priority)
    }
}
