import Foundation

/// Holds each request a test server answers until `parties` requests are in the server together,
/// then lets them all go: it proves requests were in flight at the same time by a state, not a
/// duration. A request that finds the company never comes gives up after `patience` (reached only
/// when the client holds its requests back), and every later one passes at once, so that a bug
/// fails the test instead of hanging it. Call `arrive()` from the server's connection thread.
public final class RequestGate: @unchecked Sendable {
    /// The requests that must be in the server together.
    public let parties: Int
    /// How long a request waits for the others.
    public let patience: Double
    // Guards everything below; `condition` is signalled when the gate opens.
    private let condition = NSCondition()
    // Requests arrived (none leaves: the gate opens once).
    private var inside = 0
    private var open = false
    private var gaveUp = false
    private var arrivedBeforeGivingUp: Int?

    /// A gate for `parties` requests, each waiting at most `patience` seconds.
    public init(parties: Int, patience: Double = 20) {
        self.parties = parties
        self.patience = patience
    }

    /// Called for each request: returns when `parties` requests have been in the server together
    /// (at once for the later ones), or after `patience` without them.
    public func arrive() {
        condition.lock()
        defer { condition.unlock() }
        inside += 1
        if inside >= parties { open = true; condition.broadcast() }
        let deadline = Date(timeIntervalSinceNow: patience)
        while !open && !gaveUp {
            if !condition.wait(until: deadline) {
                gaveUp = true
                arrivedBeforeGivingUp = inside
                condition.broadcast()
            }
        }
    }

    /// Whether `parties` requests were ever in the server together.
    public var met: Bool {
        condition.lock()
        defer { condition.unlock() }
        return open && !gaveUp
    }

    /// The requests that had arrived when the first gave up waiting, if one did.
    public var arrivalsWhenOneGaveUp: Int? {
        condition.lock()
        defer { condition.unlock() }
        return arrivedBeforeGivingUp
    }
}
