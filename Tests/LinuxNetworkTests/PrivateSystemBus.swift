import Foundation
import Testing
import TestSupport

/// A private D-Bus daemon started for one test, standing in for the system bus, with
/// python3-dbusmock services on it (NetworkManager from dbusmock's template, ModemManager from
/// Tests/DBusTemplates/modemmanager.py). Everything is stopped when the value goes away.
final class PrivateSystemBus {
    static let python = "/usr/bin/python3"

    /// Why these tests cannot run here (no dbus-daemon, no python3-dbusmock), or nil.
    static let unavailableReason: String? = {
        let reason: String?
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") {
            reason = "dbus-daemon is missing (Debian's dbus-daemon)"
        } else if !FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-send") {
            reason = "dbus-send is missing (Debian's dbus-bin)"
        } else if (try? ProcessResult.run(python, ["-c", "import dbusmock"]))?.status != 0 {
            reason = "python3-dbusmock is missing (scripts/setup.sh installs it)"
        } else {
            reason = nil
        }
        if let reason {
            FileHandle.standardError.write(Data("\n*** SKIPPED: D-Bus service tests cannot run: \(reason) ***\n\n".utf8))
        }
        return reason
    }()

    static var isAvailable: Bool { unavailableReason == nil }

    let folder = TemporaryFolder()
    let address: String
    private let daemon: Process
    private var services: [Process] = []

    /// Starts the daemon on a socket in a temporary folder, or at `address` (`unix:path=…`).
    init(address given: String? = nil) async throws {
        address = given ?? "unix:path=" + folder.file("system_bus_socket")
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--session", "--nofork", "--nopidfile", "--address=" + address]
        daemon.standardOutput = FileHandle.nullDevice
        try daemon.run()
        let socket = String(address.dropFirst("unix:path=".count))
        let made = await waitUntil { FileManager.default.fileExists(atPath: socket) }
        try #require(made, "dbus-daemon made no socket")
    }

    deinit {
        stopServices()
        Self.stop(daemon)
    }

    /// SIGKILL, not SIGTERM: a process started from the test runner inherits its blocked signals.
    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts dbusmock's NetworkManager (Connectivity full) with `Metered` added (`nil`: no such
    /// property), and waits until it owns its name.
    func startNetworkManager(metered: UInt32?) async throws {
        try await startService(template: "networkmanager", name: "org.freedesktop.NetworkManager", parameters: "{}")
        if let metered {
            try send("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock.AddProperty",
                     "string:org.freedesktop.NetworkManager", "string:Metered", "variant:uint32:\(metered)")
        }
    }

    /// Starts the ModemManager stand-in (no modem yet) and waits until it owns its name.
    func startModemManager() async throws {
        try await startService(template: PackagePaths.root + "/Tests/DBusTemplates/modemmanager.py", name: "org.freedesktop.ModemManager1",
                         parameters: "{}")
    }

    /// Stops every service (the bus stays).
    func stopServices() {
        for service in services { Self.stop(service) }
        services = []
    }

    /// Changes NetworkManager's `Metered`, signalling PropertiesChanged.
    func setMetered(_ value: UInt32) throws {
        try send("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock.SetProperty",
                 "objpath:/org/freedesktop/NetworkManager", "string:org.freedesktop.NetworkManager", "string:Metered",
                 "variant:uint32:\(value)")
    }

    /// Changes NetworkManager's `Connectivity`, signalling PropertiesChanged.
    func setConnectivity(_ value: UInt32) throws {
        try send("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock.SetConnectivity",
                 "uint32:\(value)")
    }

    /// Adds a modem registered in `state` (1 home, 5 roaming); returns its path.
    @discardableResult
    func addModem(registration state: UInt32) throws -> String {
        let reply = try send("org.freedesktop.ModemManager1", "/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock.AddModem",
                             "uint32:\(state)")
        guard let path = reply.split(separator: "\"").dropFirst().first else { throw Failure(description: "AddModem replied \(reply)") }
        return String(path)
    }

    /// Changes a modem's registration, signalling PropertiesChanged.
    func setRegistration(_ path: String, _ state: UInt32) throws {
        try send("org.freedesktop.ModemManager1", "/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock.SetRegistrationState",
                 "objpath:\(path)", "uint32:\(state)")
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    @discardableResult
    private func send(_ destination: String, _ path: String, _ method: String, _ arguments: String...) throws -> String {
        let result = try ProcessResult.run("/usr/bin/dbus-send", ["--bus=" + address, "--print-reply", "--dest=" + destination, path, method]
                                           + arguments)
        guard result.status == 0 else { throw Failure(description: "dbus-send \(method): \(result.stderr)") }
        return result.stdout
    }

    private func startService(template: String, name: String, parameters: String) async throws {
        let service = Process()
        service.executableURL = URL(fileURLWithPath: Self.python)
        service.arguments = ["-m", "dbusmock", "--system", "--template", template, "--parameters", parameters]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        service.environment = environment
        service.standardOutput = FileHandle.nullDevice
        service.standardError = FileHandle.nullDevice
        try service.run()
        services.append(service)
        let owned = await waitUntil {
            let reply = try? self.send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:\(name)")
            return reply?.contains("boolean true") == true
        }
        try #require(owned, "\(template) did not take \(name) on the bus")
    }
}
