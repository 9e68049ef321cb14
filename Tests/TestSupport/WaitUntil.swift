/// Waits until `condition` holds, looking every 5 ms, for at most `timeout`; returns whether it
/// held. For waiting on a state (a request reached the server), never on a guessed duration.
public func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
