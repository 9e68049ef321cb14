import ArgumentParser
import Foundation
import LinuxNetwork
import Policy

/// `imgpolicy network`: what auto-detection sees, and why.
struct NetworkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Show the network state that --network auto would use, and why.")

    @Option(help: ArgumentHelp("Read sys/class/net and proc/net under this folder instead of / (for testing).", valueName: "dir"))
    var root = "/"

    func run() throws {
        let detection = NetworkDetector(root: root).detect()
        var lines: [String] = []
        do {
            if let fromEnvironment = try EnvironmentReachability(environment: ProcessInfo.processInfo.environment) {
                lines.append("network: \(fromEnvironment.state) (from \(EnvironmentReachability.variable), which overrides detection)")
                lines.append("detected: \(detection.state)")
            } else {
                lines.append("network: \(detection.state)")
            }
        } catch {
            throw CommandFailure.usage(error.description)
        }
        lines += detection.reasons.map { "  " + $0 }
        printLine(lines.joined(separator: "\n"))
    }
}
