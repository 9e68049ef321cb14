@testable import LinuxNetwork
import Testing

/// The debounce without I/O: instants are offsets from one base.
struct SettleStateMachineTests {
    typealias Machine = SettleStateMachine<ContinuousClock.Instant>
    let base = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { base.advanced(by: .milliseconds(milliseconds)) }

    @Test func aBurstGivesOneDetectionAQuietPeriodAfterItsLastMessage() async {
        var machine = Machine(quietPeriod: .milliseconds(50), maximumDelay: .milliseconds(500))
        #expect(machine.messageArrived(at: at(0)) == .sleep(until: at(50)))
        for offset in stride(from: 1, through: 30, by: 1) {
            #expect(machine.messageArrived(at: at(offset)) == .none)  // the timer is already running
        }
        #expect(machine.timerFired(at: at(50)) == .sleep(until: at(80)))
        #expect(machine.timerFired(at: at(80)) == .detect)
        #expect(machine.state == .idle)
        #expect(machine.timerFired(at: at(90)) == .none)  // a late timer does nothing
    }

    @Test func aSingleChangeIsDetectedOneQuietPeriodLater() async {
        var machine = Machine(quietPeriod: .milliseconds(50), maximumDelay: .milliseconds(500))
        #expect(machine.messageArrived(at: at(0)) == .sleep(until: at(50)))
        #expect(machine.messageArrived(at: at(0)) == .none)
        #expect(machine.timerFired(at: at(50)) == .detect)
        // The next change starts a new timer.
        #expect(machine.messageArrived(at: at(60)) == .sleep(until: at(110)))
    }

    @Test func aNeverEndingBurstIsStillLookedAtEveryMaximumDelay() async {
        var machine = Machine(quietPeriod: .milliseconds(50), maximumDelay: .milliseconds(200))
        _ = machine.messageArrived(at: at(0))
        var now = 0
        var action = Machine.Action.sleep(until: at(50))
        while case .sleep(let deadline) = action {
            // A message every 10 ms until the timer fires.
            while at(now) < deadline { now += 10; _ = machine.messageArrived(at: at(now)) }
            action = machine.timerFired(at: deadline)
        }
        #expect(action == .detect)
        #expect(now <= 200)
    }

    @Test func aMaximumDelayShorterThanTheQuietPeriodIsTheQuietPeriod() async {
        var machine = Machine(quietPeriod: .milliseconds(50), maximumDelay: .milliseconds(10))
        #expect(machine.maximumDelay == .milliseconds(50))
        #expect(machine.messageArrived(at: at(0)) == .sleep(until: at(50)))
        #expect(machine.timerFired(at: at(50)) == .detect)
    }
}
