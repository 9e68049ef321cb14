import Foundation
import Logging
import Support
import Testing
import TestSupport

/// The package's one pool for blocking work (disk reads and writes, decodes): its jobs run on
/// threads of its own, never on the cooperative pool, in order, at most `width` at once, and still
/// run when no thread can be started.
struct BlockingWorkPoolTests {
    /// More blocked jobs than the machine has cores: the cooperative pool still runs tasks, at
    /// most `width` jobs run at once, and they start in order.
    @Test func blockedJobsLeaveTheCooperativePoolFree() async {
        let threads = BlockingWorkPool(label: "test.disk", width: 2)
        let gate = DispatchSemaphore(value: 0)
        let order = LockedList<Int>()
        let running = LockedList<Int>()
        let jobs = (0..<(ProcessInfo.processInfo.activeProcessorCount * 4)).map { index in
            Task {
                await threads.run {
                    running.append(index)
                    order.append(index)
                    gate.wait()
                }
            }
        }
        #expect(await waitUntil { running.values.count == 2 })
        // The cooperative pool is free: a task needing it runs while every job is blocked.
        #expect(await Task.detached { 42 }.value == 42)
        #expect(running.values.count == 2)
        #expect(threads.waitingCount == jobs.count - 2)
        for _ in jobs { gate.signal() }
        for job in jobs { await job.value }
        #expect(order.values.count == jobs.count)
        #expect(threads.jobsStarted == jobs.count)
    }

    /// Jobs submitted from one thread start in the order they were submitted.
    @Test func jobsStartInTheOrderTheyWereSubmitted() async {
        let threads = BlockingWorkPool(label: "test.order", width: 1)
        let order = LockedList<Int>()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<200 {
            threads.submit {
                order.append(index)
                if index == 199 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(order.values == Array(0..<200))
    }

    /// A process at its thread limit (every start refused): the submitting thread runs the jobs
    /// itself rather than leave them waiting for ever, and the refusal is logged once.
    @Test func jobsStillRunWhenNoThreadCanBeStarted() async {
        let (logger, records) = RecordingLogHandler.logger()
        let threads = BlockingWorkPool(label: "test.refused", width: 2, logger: logger) { _ throws(OwnedThread.StartFailure) in
            throw OwnedThread.StartFailure(code: EAGAIN)
        }
        let value = await threads.run { 7 }
        #expect(value == 7)
        #expect(await threads.run { 8 } == 8)
        #expect(threads.jobsStarted == 2)
        // Said once, not once per job.
        #expect(records.all.filter { $0.level == .warning && $0.metadata["pool"] == "test.refused" }.count == 1)
    }
}
