import CSystemBus
import Policy
import Support

/// One connection to the system bus (sd-bus) and the questions asked of NetworkManager and
/// ModemManager over it. Connecting, authenticating and every call give up after `callTimeout`;
/// after one call has timed out the rest are not asked (each would cost another `callTimeout`),
/// so reading the facts never takes much more than twice `callTimeout`.
///
/// Thread safety: none; one thread uses a connection at a time (the watcher's, or a one-shot
/// reading's).
final class SystemBusConnection {
    /// Why the bus could not be had, in words (`no system bus at …: why`, `the bus at … did not
    /// answer within 1 s`).
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let handle: OpaquePointer
    private let location: String
    private let callTimeout: Duration

    /// Connects to the bus at `address` (nil: `DBUS_SYSTEM_BUS_ADDRESS`, else the standard
    /// socket); with `dirty`, subscribes to the services' signals (each sets it to 1).
    init(address: String?, callTimeout: Duration, dirty: UnsafeMutablePointer<Int32>?) throws(Failure) {
        self.callTimeout = callTimeout
        location = Self.describe(address)
        var message = [CChar](repeating: 0, count: 512)
        var bus: OpaquePointer?
        let timeout = UInt64(clamping: max(callTimeout.components.seconds, 0)) * 1_000_000
            + UInt64(clamping: max(callTimeout.components.attoseconds, 0) / 1_000_000_000_000)
        let opened: Int32
        if let address {
            opened = csysbus_open(address, timeout, dirty, &bus, &message, message.count)
        } else {
            opened = csysbus_open(nil, timeout, dirty, &bus, &message, message.count)
        }
        guard opened >= 0, let bus else {
            if opened == -ETIMEDOUT {
                throw Failure(description: "the bus at \(location) did not answer within \(Self.words(callTimeout))")
            }
            throw Failure(description: "no system bus at \(location): \(Self.text(message))")
        }
        handle = bus
    }

    deinit { csysbus_close(handle) }

    /// Where the bus was looked for, in words.
    static func describe(_ address: String?) -> String {
        if let address { return address }
        if let variable = getenv("DBUS_SYSTEM_BUS_ADDRESS"), variable.pointee != 0 {
            // Shown as its bytes are (`\xHH` for those that are not UTF-8), never repaired.
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(variable).assumingMemoryBound(to: UInt8.self), count: strlen(variable))
            return PathBytes.displayed(bytes) + " ($DBUS_SYSTEM_BUS_ADDRESS)"
        }
        return "unix:path=/run/dbus/system_bus_socket (the standard place)"
    }

    /// `1 s`, `250 ms`.
    static func words(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - the facts

    /// The facts, and whether every running service answered.
    func readFacts() -> (facts: ServiceFacts, complete: Bool) {
        var facts = ServiceFacts.unknown("")
        var complete = true
        var timedOut: String?
        // A call that timed out: the others are not asked.
        func skipped() -> NetworkFact? { timedOut.map { .unknown("not asked: \($0)") } }
        switch ask({ hasOwner(SystemBusWatcher.networkManager, &$0) }, &timedOut) {
        case .failure(let why):
            facts.metered = .unknown("asking the bus for NetworkManager failed: \(why)")
            facts.captive = facts.metered
            complete = false
        case .success(false):
            facts.metered = .unknown("NetworkManager is not running (no \(SystemBusWatcher.networkManager) on the bus)")
            facts.captive = facts.metered
        case .success(true):
            let metered = networkManagerFact("Metered", ServiceFacts.metered(networkManagerValue:), &timedOut)
            facts.metered = metered.fact
            let captive = skipped().map { ($0, false) } ?? networkManagerFact("Connectivity", ServiceFacts.captive(networkManagerConnectivity:), &timedOut)
            facts.captive = captive.0
            complete = complete && metered.answered && captive.1
        }
        if let skipped = skipped() {
            facts.roaming = skipped
            return (facts, false)
        }
        switch ask({ hasOwner(SystemBusWatcher.modemManager, &$0) }, &timedOut) {
        case .failure(let why):
            facts.roaming = .unknown("asking the bus for ModemManager failed: \(why)")
            complete = false
        case .success(false):
            facts.roaming = .unknown("ModemManager is not running (no \(SystemBusWatcher.modemManager) on the bus)")
        case .success(true):
            var states = [UInt32](repeating: 0, count: 16)
            var count: Int32 = 0
            var message = [CChar](repeating: 0, count: 512)
            let read = csysbus_modem_registration_states(handle, &states, Int32(states.count), &count, &message, message.count)
            facts.roaming = read < 0
                ? .unknown("ModemManager's modems could not be read: \(explain(read, message))")
                : ServiceFacts.roaming(registrationStates: Array(states.prefix(Int(min(max(count, 0), Int32(states.count))))))
            complete = complete && read >= 0
        }
        return (facts, complete)
    }

    /// The bus's words for a failed call, or that it did not answer in time.
    private func explain(_ result: Int32, _ message: [CChar]) -> String {
        result == -ETIMEDOUT ? "the bus at \(location) did not answer within \(Self.words(callTimeout))" : Self.text(message)
    }

    private func ask(_ call: (inout [CChar]) -> Int32, _ timedOut: inout String?) -> Result<Bool, Failure> {
        var message = [CChar](repeating: 0, count: 512)
        let result = call(&message)
        guard result >= 0 else {
            let why = explain(result, message)
            if result == -ETIMEDOUT { timedOut = why }
            return .failure(Failure(description: why))
        }
        return .success(result == 1)
    }

    private func hasOwner(_ name: String, _ message: inout [CChar]) -> Int32 {
        csysbus_name_has_owner(handle, name, &message, message.count)
    }

    /// A `u` property of NetworkManager's manager object, interpreted; unknown with the bus's
    /// words when it cannot be read.
    private func networkManagerFact(_ member: String, _ interpret: (UInt32) -> NetworkFact,
                                    _ timedOut: inout String?) -> (fact: NetworkFact, answered: Bool) {
        var value: UInt32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let result = csysbus_get_u32(handle, SystemBusWatcher.networkManager, "/org/freedesktop/NetworkManager",
                                     SystemBusWatcher.networkManager, member, &value, &message, message.count)
        guard result >= 0 else {
            let why = explain(result, message)
            if result == -ETIMEDOUT { timedOut = why }
            return (.unknown("NetworkManager's \(member) could not be read: \(why)"), false)
        }
        return (interpret(value), true)
    }
}
