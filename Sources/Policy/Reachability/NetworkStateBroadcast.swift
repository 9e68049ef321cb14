import Support

/// The state a reachability provider reports and its open `stateChanges()` streams: the one
/// implementation of "the state now, then each change" that `FixedReachability` and
/// `PolicyTesting`'s `DrivenReachability` share (a simulation's scripted network is a
/// `FixedReachability`).
///
/// A new stream yields the current state first; `set(_:)` yields a new state to every open
/// stream, unless it equals the current one (consecutive equal states are not repeated); a
/// stream's consumer ending it removes it. `observersChanged` is told the number of open streams
/// each time a stream is opened, outside the lock (for waiters on observers).
///
/// Thread safety: every method may be called from any thread or task at once.
package final class NetworkStateBroadcast: Sendable {
    private struct State {
        var current: NetworkState
        var streams: [Int: AsyncStream<NetworkState>.Continuation] = [:]
        var nextID = 0
    }

    // Guards the state and the open streams.
    private let state: Locked<State>
    private let bufferSize: Int
    private let observersChanged: (@Sendable (Int) -> Void)?

    /// A broadcast starting at `initial`, each stream keeping the newest `bufferSize` states its
    /// consumer has not taken yet.
    package init(_ initial: NetworkState, bufferSize: Int = 64, observersChanged: (@Sendable (Int) -> Void)? = nil) {
        state = Locked(State(current: initial))
        self.bufferSize = max(1, bufferSize)
        self.observersChanged = observersChanged
    }

    /// The state now.
    package var current: NetworkState { state.withLock { $0.current } }

    /// Streams open (made and not yet ended by their consumer).
    package var observerCount: Int { state.withLock { $0.streams.count } }

    /// Makes `newState` the current state and yields it to every open stream; `changed` runs
    /// under the lock when it differs from the current one (so that what it records keeps the
    /// order of the changes). Returns whether it differed.
    @discardableResult
    package func set(_ newState: NetworkState, changed: ((NetworkState) -> Void)? = nil) -> Bool {
        let streams: [AsyncStream<NetworkState>.Continuation]? = state.withLock { state in
            guard state.current != newState else { return nil }
            state.current = newState
            changed?(newState)
            return Array(state.streams.values)
        }
        guard let streams else { return false }
        for stream in streams { stream.yield(newState) }
        return true
    }

    /// The state now, then each change.
    package func stream() -> AsyncStream<NetworkState> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkState.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let (id, count): (Int, Int) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            continuation.yield(state.current)
            return (id, state.streams.count)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        observersChanged?(count)
        return stream
    }

    /// Ends every open stream: each consumer's `for await` loop finishes.
    package func finishAll() {
        let streams = state.withLock { state in
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
