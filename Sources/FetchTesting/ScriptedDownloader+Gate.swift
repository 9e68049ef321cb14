import Policy
import PolicyTesting
import Support

extension ScriptedDownloader {
    /// Holds scripted answers until the test opens it: a download reaches the gate after its
    /// delay, waits there, and answers once `open()` is called, so that a test can act while a
    /// load is in flight (cancel its callers, start a second one) without guessing at times.
    ///
    /// ```swift
    /// let gate = ScriptedDownloader.Gate()
    /// let downloader = ScriptedDownloader(heldBy: gate) { .bytes(jpeg) }
    /// let load = Task { try await pipeline.image(for: photo) }
    /// await gate.waitForWaiters(1)          // the download is at the gate
    /// // … what the test checks while the load is in flight …
    /// gate.open()
    /// ```
    ///
    /// `letThrough(_:)` lets one download of a URL through and keeps the gate closed for the
    /// others, as a test finishes one transfer of several.
    ///
    /// `whenCancelled` says what a download cancelled at the gate does: stop at once (as a
    /// transfer stops), stop only when the gate opens (a transfer slow to wind down), or answer
    /// when the gate opens (its body had fully arrived when it was told to stop).
    ///
    /// Thread safety: every member may be used from any task or thread at once.
    public final class Gate: Sendable {
        /// What a download cancelled while it waits at the gate does.
        public enum WhenCancelled: Sendable, Equatable {
            /// Throws `FetchError` with code `.cancelled` at once (the default).
            case stopsAtOnce
            /// Waits for `open()`, then throws `.cancelled`.
            case stopsAtGate
            /// Waits for `open()`, then answers as if it had not been cancelled.
            case completes
        }

        private struct State {
            var isOpen = false
            var waiting: [Int: (url: ImageURL, continuation: CheckedContinuation<Void, Never>)] = [:]
            var permits: [ImageURL: Int] = [:]
            var nextID = 0
            var countWaiters = CountWaiters()
        }

        // Guards whether the gate is open and the downloads waiting at it.
        private let state = Locked(State())

        /// What a download cancelled at the gate does.
        public let whenCancelled: WhenCancelled

        /// A closed gate.
        ///
        /// - Parameter whenCancelled: what a download cancelled at the gate does (default: it
        ///   stops at once).
        public init(whenCancelled: WhenCancelled = .stopsAtOnce) {
            self.whenCancelled = whenCancelled
        }

        /// How many downloads wait at the gate now.
        public var waitingCount: Int { state.withLock { $0.waiting.count } }

        /// Whether `open()` was called.
        public var isOpen: Bool { state.withLock { $0.isOpen } }

        /// Lets every download through, those waiting now and those that come later.
        public func open() {
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.isOpen = true
                defer { state.waiting.removeAll() }
                return state.waiting.values.map(\.continuation) + state.countWaiters.released(at: Int.max)
            }
            for continuation in released { continuation.resume() }
        }

        /// Lets one download of `url` through while the gate stays closed: the one waiting now
        /// (the earliest, if several wait), or else the next to arrive; as a transfer that the
        /// test finishes.
        public func letThrough(_ url: ImageURL) {
            let released = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let id = state.waiting.filter({ $0.value.url == url }).keys.min() else {
                    state.permits[url, default: 0] += 1
                    return nil
                }
                return state.waiting.removeValue(forKey: id)?.continuation
            }
            released?.resume()
        }

        /// Returns once at least `count` downloads wait at the gate (or have been let through by
        /// `open()`), so that a test acts only when the load is in flight.
        public func waitForWaiters(_ count: Int = 1) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let kept = state.withLock { state in
                    state.countWaiters.wait(for: count, current: state.isOpen ? Int.max : state.waiting.count, continuation)
                }
                if !kept { continuation.resume() }
            }
        }

        /// Returns when the gate is open or lets `url` through, or at once when the task is
        /// cancelled and `whenCancelled` is `.stopsAtOnce`.
        func pass(_ url: ImageURL) async {
            let id = state.withLock { state -> Int in
                state.nextID += 1
                return state.nextID
            }
            let stopsAtOnce = whenCancelled == .stopsAtOnce
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let (proceed, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                        if state.isOpen || (Task.isCancelled && stopsAtOnce) { return (true, []) }
                        if let permits = state.permits[url], permits > 0 {
                            state.permits[url] = permits > 1 ? permits - 1 : nil
                            return (true, [])
                        }
                        state.waiting[id] = (url, continuation)
                        return (false, state.countWaiters.released(at: state.waiting.count))
                    }
                    for waiter in ready { waiter.resume() }
                    if proceed { continuation.resume() }
                }
            } onCancel: {
                guard stopsAtOnce else { return }
                let waiter = state.withLock { $0.waiting.removeValue(forKey: id) }
                waiter?.continuation.resume()
            }
        }
    }
}
