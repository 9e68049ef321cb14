import ArgumentParser
import Foundation
import LinuxNetwork
import Policy

/// `imgpolicy network [--json] [--watch]`: what auto-detection sees, each source and what it said,
/// and (with `--watch`) each change as it happens.
struct NetworkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Show the network state that --network auto would use, each source and what it said.",
        discussion: """
            Sources: the kernel (sysfs and the default route, kept fresh by netlink events), \
            NetworkManager (Metered: expensive; Connectivity portal/limited/none: captive) and \
            ModemManager (3GPP registration roaming) on the system bus ($DBUS_SYSTEM_BUS_ADDRESS, \
            else the standard one). A missing bus or service leaves its fact unknown, and says why. \
            $IMGPOLICY_NETWORK, when set, overrides them all. With --watch, the state is printed, then \
            one line per change until interrupted (with $IMGPOLICY_NETWORK set, once).
            """)

    @Option(help: ArgumentHelp("Read sys/class/net and proc/net under this folder instead of / (for testing).", valueName: "dir"))
    var root = "/"

    @Flag(help: "One JSON object per state (keys: state, kind, expensive, constrained, roaming, captive, interface, reason, sources).")
    var json = false

    @Flag(help: "Keep running: print the state, then one line per change, until interrupted.")
    var watch = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let override: EnvironmentReachability?
        do {
            override = try EnvironmentReachability(environment: environment)
        } catch {
            throw CommandFailure.usage(error.description)
        }
        let configuration = LinuxReachability.Configuration(detector: NetworkDetector(root: root))
        let provider: LinuxReachability
        do {
            provider = try LinuxReachability(configuration: configuration)
        } catch {
            guard !watch else { throw CommandFailure(error.description, status: .unavailable) }
            // No events (netlink forbidden here): one detection, no services.
            let detection = configuration.detector.detect()
            let report = NetworkReport(state: override?.state ?? detection.state, override: override, detection: detection,
                                       facts: .unknown(error.description))
            write(json ? report.jsonLine : report.text)
            return
        }
        await provider.servicesAsked()
        func report(_ state: NetworkState) -> NetworkReport {
            NetworkReport(state: override?.state ?? state, override: override, detection: provider.detection,
                          facts: provider.serviceFacts)
        }
        guard watch else {
            let current = report(provider.currentState)
            write(json ? current.jsonLine : current.text)
            await provider.shutdown()
            return
        }
        if override != nil {
            let current = report(provider.currentState)
            write(json ? current.jsonLine : current.line)
            await provider.shutdown()
            return
        }
        for await state in provider.stateChanges() {
            let current = report(state)
            write(json ? current.jsonLine : current.line)
        }
        await provider.shutdown()
    }

    /// Standard output, unbuffered: a watcher reading a pipe sees each line at once.
    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}
