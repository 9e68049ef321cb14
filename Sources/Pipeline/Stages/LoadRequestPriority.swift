import Support
import Transport

/// The priority the transport reads for one load of the pipeline, kept by the pipeline as the
/// load's context in its `LoadTable` (the same object for the load's whole life, restarts
/// included). The table decides its value; the pipeline applies the table's changes here after
/// releasing its lock, and a change older than one already applied is dropped, so that changes
/// carried out by several threads at once end on the table's last word.
///
/// Thread safety: `apply(_:revision:)` may be called from any thread at once.
final class LoadRequestPriority: Sendable {
    /// What the downloader is given for the load.
    let request: RequestPriority
    // Guards the revision of the last change applied; the value is set under it, so that two
    // changes cannot land in the reverse order of their revisions. A leaf lock: setting the value
    // takes only `RequestPriority`'s own lock.
    private let applied = Locked(0)

    /// A load's priority, starting at `value`.
    init(_ value: LoadPriority) {
        request = RequestPriority(value)
    }

    /// Sets the value to `value`, the table's change numbered `revision`, unless a later change
    /// was applied already.
    func apply(_ value: LoadPriority, revision: Int) {
        applied.withLock { last in
            guard revision > last else { return }
            last = revision
            request.value = value
        }
    }
}
