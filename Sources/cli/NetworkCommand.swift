import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinuxNetwork
import Policy
import Support

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
            one line per change until interrupted or until its standard output is closed (exit 0; \
            with $IMGPOLICY_NETWORK set, once).
            """)

    @Option(help: ArgumentHelp("Read sys/class/net and proc/net under this folder instead of / (for testing; a path that is not a folder is refused, exit 66).", valueName: "dir"))
    var root = "/"

    @Flag(help: "One JSON object per state (keys: state, kind, expensive, constrained, roaming, captive, interface, reason, sources).")
    var json = false

    @Flag(help: "Keep running: print the state, then one line per change, until interrupted.")
    var watch = false

    /// `--root` must name a folder (followed through links): a missing path, a file or a FIFO
    /// would otherwise read as an empty tree, "offline", exit 0. Exit 66, naming it.
    func checkRoot() throws {
        guard !root.isEmpty else { throw CommandFailure.usage("--root: the path is empty") }
        switch FileKind(path: root, followingLinks: true) {
        case .directory?: return
        case let kind?: throw CommandFailure("--root \(root): is \(kind.article), not a folder", status: .noInput)
        case nil:
            let dangling = FileKind(path: root, followingLinks: false) == .symbolicLink
            throw CommandFailure("--root \(root): \(dangling ? "is a symbolic link to nothing (or a loop), not a folder" : "no such folder")",
                                 status: .noInput)
        }
    }

    func run() async throws {
        try checkRoot()
        let environment = ProcessEnvironment.variables
        let override: EnvironmentReachability?
        do {
            override = try EnvironmentReachability(environment: environment)
        } catch {
            throw CommandFailure.usage(error.description)
        }
        let detector = NetworkDetector(root: root)
        func report(_ snapshot: NetworkSnapshot) -> NetworkReport {
            NetworkReport(state: override?.state ?? snapshot.state, override: override, detection: snapshot.detection,
                          facts: snapshot.facts)
        }
        guard watch, override == nil else {
            // One reading: the headline is combined from the very facts the sources show, and the
            // bus gets at most about two call timeouts, whatever it does.
            let current = report(detector.detectWithServices())
            write(json ? current.jsonLine : watch ? Self.escapedLines(current.line) : Self.escapedLines(current.text))
            return
        }
        let provider: LinuxReachability
        do {
            provider = try LinuxReachability(configuration: LinuxReachability.Configuration(detector: detector))
        } catch {
            throw CommandFailure(error.description, status: .unavailable)
        }
        // A reader that leaves (`| head -1`) ends the watch at once, not at the next change.
        StandardStreams.exitWhenOutputCloses()
        await provider.servicesAsked()
        // Each line is printed from one snapshot (the settled state first), and only when it says
        // something new: a stream value that the snapshot already showed is no change.
        // What the last line said: the state and the interface (the reasons alone changing, as a
        // link comes up before its route, is no change worth a line).
        var printed: (state: NetworkState, interface: String?)?
        func show() {
            let snapshot = provider.snapshot
            let current = report(snapshot)
            let shown = (state: current.state, interface: snapshot.detection.interface?.name)
            if let printed, printed.state == shown.state, printed.interface == shown.interface { return }
            printed = shown
            write(json ? current.jsonLine : Self.escapedLines(current.line))
        }
        show()
        // Snapshots, not states: the interface is part of what is printed, and the default route
        // moving to another link of the same kind changes it without changing the state.
        for await _ in provider.snapshotChanges() {
            show()
        }
        await provider.shutdown()
    }

    /// Each line made safe for a terminal (the bus address, interface names and the services'
    /// words come from outside).
    static func escapedLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escaped(String($0)) }.joined(separator: "\n")
    }

    /// Standard output, unbuffered: a watcher reading a pipe sees each line at once.
    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}
