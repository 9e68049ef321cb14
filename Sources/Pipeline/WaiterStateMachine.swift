import Transport
import Caching
import Accounting
import HTTPSemantics
/// The life of one caller of `ImagePipeline.image(for:)` that waits for a load: a value that
/// returns what to do, tested without I/O (in the manner of async-http-client's
/// `Transaction.StateMachine`).
///
/// ```
/// created ──register──▶ registered ──deliver / cancel──▶ finished
///    │                                                      ▲
///    └──cancel──▶ cancelledBeforeRegistration ──register────┘ (resumed as cancelled at once)
/// ```
///
/// A waiter is resumed exactly once, whatever the order of `register`, `cancel` and `deliver`
/// (cancellation may arrive on another thread before the continuation exists, or after the result
/// was delivered). A finished waiter holds nothing: its owner forgets it.
struct WaiterStateMachine<Continuation> {
    enum State {
        /// The call began; its continuation does not exist yet.
        case created
        /// The calling task was cancelled before the continuation was registered.
        case cancelledBeforeRegistration
        /// Waiting for the load's result.
        case registered(Continuation)
        /// Resumed, with the result or as cancelled: nothing more happens.
        case finished
    }

    private(set) var state: State = .created

    /// What to do after `register`.
    enum RegisterAction {
        /// Wait for the load (join it, or start it).
        case wait
        /// The caller was cancelled already: resume this continuation as cancelled now.
        case resumeCancelled(Continuation)
    }

    /// What to do after `cancel` or `deliver`.
    enum ResumeAction {
        /// Nothing: not registered yet, or already resumed.
        case none
        /// Resume this continuation (as cancelled after `cancel`, with the result after `deliver`).
        case resume(Continuation)
    }

    /// Whether the waiter was resumed and can be forgotten.
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The continuation now exists.
    mutating func register(_ continuation: Continuation) -> RegisterAction {
        switch state {
        case .created:
            state = .registered(continuation)
            return .wait
        case .cancelledBeforeRegistration:
            state = .finished
            return .resumeCancelled(continuation)
        case .registered, .finished:
            preconditionFailure("a waiter registers its continuation once")
        }
    }

    /// The calling task was cancelled (at any moment, on any thread).
    mutating func cancel() -> ResumeAction {
        switch state {
        case .created:
            state = .cancelledBeforeRegistration
            return .none
        case .registered(let continuation):
            state = .finished
            return .resume(continuation)
        case .cancelledBeforeRegistration, .finished:
            return .none
        }
    }

    /// The load finished (its result goes to the continuation).
    mutating func deliver() -> ResumeAction {
        switch state {
        case .registered(let continuation):
            state = .finished
            return .resume(continuation)
        case .created, .cancelledBeforeRegistration, .finished:
            // A load only delivers to waiters that joined it, and those registered first.
            return .none
        }
    }
}
