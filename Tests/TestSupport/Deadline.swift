import Foundation

/// A wait in a test passed its deadline: what the test waited for did not come. Thrown, so that
/// the test fails with this message instead of hanging the suite.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What the test waited for.
    public var waitingFor: String
    /// The deadline, in seconds.
    public var seconds: Double
    /// Where the wait is written.
    public var location: String

    public var description: String {
        "\(location): nothing after \(seconds) s waiting for \(waitingFor) (a deadline, so that a bug fails the test instead of hanging it)"
    }
}

/// Runs `body` with a deadline: every await in a test on something that may never come (the next
/// element of an async sequence, a continuation) goes through here, so that a bug fails the test
/// with `DeadlineExceeded` instead of hanging the suite.
///
///     var changes = provider.stateChanges().makeAsyncIterator()
///     #expect(try await withDeadline("the first state") { await changes.next() } == NetworkState(.wired))
///
/// `body` runs in a task of its own while the caller waits for it (the caller does nothing else
/// meanwhile, so `body` may use the caller's variables, an iterator among them). When `seconds`
/// pass first (counted as `waitUntil` counts: in looks, so that a starved machine does not use the
/// wait up), that task is cancelled: the awaits of async streams end at once (`next()` returns
/// nil) and the caller gets `DeadlineExceeded`. A body that ignores cancellation (a continuation
/// nobody resumes) cannot be ended from outside: 30 s after the deadline the test process stops
/// with a message saying which wait it was, a failure CI reports instead of a hang.
public func withDeadline<T>(seconds: Double = 60, _ waitingFor: String,
                            fileID: String = #fileID, line: Int = #line,
                            _ body: @escaping () async throws -> T) async throws -> T {
    let exceeded = DeadlineExceeded(waitingFor: waitingFor, seconds: seconds, location: "\(fileID):\(line)")
    let run = DeadlineRun(body)
    let finishedInTime = try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask { await run.run(); return true }
        group.addTask {
            // Counted in looks of 10 ms, as `waitUntil` counts its own: a cooperative pool starved
            // by ThreadSanitizer starves this watchdog as much as the work it watches. Cancelled
            // (the sleep throws) when the body finishes first.
            for _ in 0..<max(1, Int(seconds * 100)) { try await Task.sleep(for: .milliseconds(10)) }
            return false
        }
        defer { group.cancelAll() }   // the sleep, or the late body: leaving the group waits for it
        let finishedInTime = try await group.next() ?? false
        if !finishedInTime {
            Task.detached {
                try? await Task.sleep(for: .seconds(30))
                if !run.isFinished { fatalError("\(exceeded); the wait ignores cancellation, so the test process stops") }
            }
        }
        return finishedInTime
    }
    guard finishedInTime else { throw exceeded }
    return try run.result()
}

/// The body of a `withDeadline` call and what it returned.
private final class DeadlineRun<T>: @unchecked Sendable {
    // `body` is called once, by the group's task, while the caller of `withDeadline` waits for that
    // task; `outcome` is written by that task before it ends and read by the caller after. `lock`
    // guards `finished`, which the watchdog of a late body reads from another task.
    private let body: () async throws -> T
    private var outcome: Result<T, any Error>?
    private let lock = NSLock()
    private var finished = false

    init(_ body: @escaping () async throws -> T) { self.body = body }

    func run() async {
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        lock.withLock { finished = true }
    }

    var isFinished: Bool { lock.withLock { finished } }

    func result() throws -> T {
        guard let outcome else { throw CancellationError() }
        return try outcome.get()
    }
}
