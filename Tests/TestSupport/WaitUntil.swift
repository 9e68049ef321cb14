/// Waits until `condition` holds, looking every 5 ms, for at most `timeout`; returns whether it
/// held. For waiting on a state (a request reached the server), never on a guessed duration. The
/// default is long on purpose: it is reached only when the state never comes, and a shared
/// machine or ThreadSanitizer can delay a state that does come by several seconds.
public func waitUntil(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
