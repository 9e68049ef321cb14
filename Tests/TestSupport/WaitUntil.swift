/// Waits until `condition` holds, looking every 5 ms, for at most `timeout`; returns whether it
/// held. For waiting on a state (a request reached the server), never on a guessed duration.
///
/// The timeout is counted in looks, not on the wall clock: `timeout / 5 ms` looks, each after a
/// 5 ms sleep. When the machine or Swift's cooperative pool is starved (ThreadSanitizer, parallel
/// builds, a suite of synchronous tests holding the pool's two threads), this waiter is starved
/// exactly as much as the work it waits for, so a starved minute does not use up the wait; on an
/// idle machine the wait lasts about `timeout`. The default is long on purpose: it is reached only
/// when the state never comes.
public func waitUntil(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let interval = Duration.milliseconds(5)
    let looks = max(1, Int(timeout / interval))
    for _ in 0..<looks {
        if condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return condition()
}
