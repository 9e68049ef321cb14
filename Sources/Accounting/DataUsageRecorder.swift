import Support
import Policy
import HTTPSemantics

/// Counts what an `ImageLoader`'s loads cost, for an app to read and observe: give it to the
/// loader (`ImageLoader(…, usage: recorder)`) and every load made through that loader is counted
/// once, with its decision's network state, the variant and the image's source.
///
/// ```swift
/// let recorder = DataUsageRecorder()
/// let loader = ImageLoader(policy: .default, reachability: reachability, settings: settings,
///                          pipeline: pipeline, usage: recorder)
/// Task { for await usage in recorder.changes() { updateDataLabel(usage) } }
/// // Now and then (the app going to the background, on exit), keep it across runs:
/// try DataUsageLedger(cacheFolder: disk.folder).save(recorder)
/// ```
///
/// What one load counts (`record(_:for:cache:)`):
/// - an image shown (downloaded, or read from disk or memory): its bytes and one transfer under
///   the decision's link, the variant and the source (a resumed download: the bytes it received,
///   not those it kept); a failed load's cached fallback thumbnail too.
/// - the retries the download needed (`FetchedImage.retries`, or `FetchError.attempts` - 1 for
///   a download that failed for good), and the bytes a resumed download kept from an earlier
///   transfer (`FetchedImage.resumedBytes`), under the decision's link.
/// - the body bytes received by attempts that failed (`FetchedImage.failedBytes`, or
///   `FetchError.receivedBytes` for a download that failed for good), under the decision's link.
///   A cancelled load's are not counted here: its waiter leaves before the transfer stops, so
///   the pipeline counts what the transfer received into its `backgroundUsage`.
/// - a decision for the thumbnail (loaded or cached) or the placeholder while the item's
///   original is not cached: one original not downloaded on that link, **once per original URL** for the life
///   of the recorder (a row scrolled back to is not a second saving). Offline and captive
///   states count none: nothing could have been downloaded there.
///
/// Thread safety: every member may be used from any task or thread at once. Changes are
/// delivered in order, outside the lock.
public final class DataUsageRecorder: Sendable {
    package struct State {
        /// Whether the caller must deliver: nobody is delivering now (it then is).
        mutating func startDelivering() -> Bool {
            guard !delivering else { return false }
            delivering = true
            return true
        }

        /// Everything counted since the recorder was made.
        var total = DataUsage()
        /// What no ledger holds yet (`takeUnsaved()`).
        var unsaved = DataUsage()
        /// Hashes of the original URLs already counted as not downloaded.
        package var heldBack: Set<Int> = []
        var observers: [Int: AsyncStream<DataUsage>.Continuation] = [:]
        var nextObserver = 0
        /// Bumped by each change; `delivered` is the change observers last got.
        var version = 0
        var delivered = 0
        /// Whether a thread is delivering changes now (it delivers every later one too).
        var delivering = false
    }

    // Guards the counts, the observers and the delivery state.
    private let state = Locked(State())

    /// Creates a recorder with nothing counted (counting cannot fail: there is nothing to log).
    public init() {}

    /// Everything counted since the recorder was made.
    public var usage: DataUsage { state.withLock { $0.total } }

    /// The current usage, then each change (the newest only, when the reader is slower than the
    /// loads). The stream ends when the reader stops iterating.
    public func changes() -> AsyncStream<DataUsage> {
        let (stream, continuation) = AsyncStream.makeStream(of: DataUsage.self, bufferingPolicy: .bufferingNewest(1))
        // Registered, then given the current value through the ordered delivery (every observer
        // gets it again: harmless, and no older value can follow a newer one).
        let (id, mustDeliver) = state.withLock { state -> (Int, Bool) in
            state.nextObserver += 1
            state.observers[state.nextObserver] = continuation
            state.version += 1
            return (state.nextObserver, state.startDelivering())
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        if mustDeliver { deliver() }
        return stream
    }

    /// Counts a download the pipeline made on its own after a load had returned (a background
    /// revalidation answered with a new image: `ImagePipeline.backgroundUsage`): `bytes` from the
    /// network for `variant`, its retries and the bytes its failed attempts received, under
    /// `network`'s link.
    public func recordBackgroundDownload(bytes: Int, retries: Int = 0, failedBytes: Int = 0, variant: Variant, on network: NetworkState) {
        var change = DataUsage()
        change.add(.init(bytes: bytes, transfers: 1), for: .init(link: .init(network), variant: variant, source: .network))
        change.addRetries(retries, on: .init(network))
        change.addFailedBytes(failedBytes, on: .init(network))
        apply { _ in change }
    }

    /// Counts `bytes` received on `network` by attempts that failed or were cancelled, for
    /// transfers no load through `ImageLoader` counts (a cancelled load, a prefetch, a background
    /// revalidation: `ImagePipeline.backgroundUsage`).
    public func recordFailedBytes(_ bytes: Int, on network: NetworkState) {
        var change = DataUsage()
        change.addFailedBytes(bytes, on: .init(network))
        apply { _ in change }
    }

    /// Counts `count` retries made on `network`, for downloads made outside a loader (a load
    /// through `ImageLoader` counts its own: `FetchedImage.retries`, `FetchError.attempts`).
    public func recordRetries(_ count: Int, on network: NetworkState) {
        var change = DataUsage()
        change.addRetries(count, on: .init(network))
        apply { _ in change }
    }

    /// What no ledger holds yet, which the recorder then forgets (its `usage` keeps counting
    /// from the start). A ledger that could not write it gives it back with `restoreUnsaved(_:)`.
    public func takeUnsaved() -> DataUsage {
        state.withLock { state in
            defer { state.unsaved = DataUsage() }
            return state.unsaved
        }
    }

    /// Puts back usage taken with `takeUnsaved()` that could not be saved.
    public func restoreUnsaved(_ usage: DataUsage) {
        state.withLock { $0.unsaved.merge(usage) }
    }

    /// Applies the change `body` returns (made under the lock), then delivers it to the
    /// observers outside the lock, in order: the first thread to find nobody delivering
    /// delivers every version until it is the latest.
    package func apply(_ body: (inout State) -> DataUsage) {
        let mustDeliver = state.withLock { state -> Bool in
            let change = body(&state)
            guard !change.isEmpty else { return false }
            state.total.merge(change)
            state.unsaved.merge(change)
            state.version += 1
            return state.startDelivering()
        }
        if mustDeliver { deliver() }
    }

    /// Yields each version to the observers until the latest was delivered (only the thread
    /// that started delivering runs this).
    private func deliver() {
        while true {
            let next = state.withLock { state -> (DataUsage, [AsyncStream<DataUsage>.Continuation])? in
                guard state.delivered != state.version else {
                    state.delivering = false
                    return nil
                }
                state.delivered = state.version
                return (state.total, Array(state.observers.values))
            }
            guard let (usage, observers) = next else { return }
            for observer in observers { observer.yield(usage) }
        }
    }

    deinit {
        for observer in state.withLock({ Array($0.observers.values) }) { observer.finish() }
    }
}
