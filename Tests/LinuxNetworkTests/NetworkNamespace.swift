import Foundation
import Testing
import TestSupport

/// A network namespace made for one test (`ip netns add`), deleted when the test ends.
final class NetworkNamespace: Sendable {
    /// `ip`, as iproute2 installs it.
    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why namespace tests cannot run here (not root, no iproute2, namespaces forbidden), or nil
    /// when they can: found once by making and deleting a namespace. Printed loudly when set.
    static let unavailableReason: String? = {
        let reason: String?
        if getuid() != 0 {
            reason = "not root (uid \(getuid())): network namespaces need CAP_SYS_ADMIN"
        } else if ip == nil {
            reason = "iproute2's ip is missing (scripts/setup.sh installs it)"
        } else {
            let name = "imgpolicy-check-\(getpid())"
            let made = try? ProcessResult.run(ip!, ["netns", "add", name])
            if made?.status == 0 {
                _ = try? ProcessResult.run(ip!, ["netns", "del", name])
                reason = nil
            } else {
                reason = "ip netns add failed: \(made?.stderr.trimmingCharacters(in: .whitespacesAndNewlines) ?? "could not run ip")"
            }
        }
        if let reason {
            FileHandle.standardError.write(Data("\n*** SKIPPED: network namespace tests cannot run: \(reason) ***\n\n".utf8))
        }
        return reason
    }()

    /// Whether namespace tests can run.
    static var isAvailable: Bool { unavailableReason == nil }

    private static let counter = LockedList<Int>()

    /// The namespace's name.
    let name: String

    /// Makes a fresh namespace.
    init() throws {
        // One step: two tests making namespaces at once once got the same number (and name).
        name = "imgpolicy-\(getpid())-\(NetworkNamespace.counter.appendReturningCount(0))"
        try Self.run(["netns", "add", name])
    }

    deinit {
        _ = try? ProcessResult.run(Self.ip ?? "ip", ["netns", "del", name])
    }

    /// Runs `ip -n NAME arguments…`; throws with ip's message when it fails.
    func ip(_ arguments: String...) throws {
        try Self.run(["-n", name] + arguments)
    }

    /// A veth pair in the namespace: `name` (with `address`/24 when given) and its peer, both up.
    func addLink(_ link: String, peer: String, address: String? = nil) throws {
        try ip("link", "add", link, "type", "veth", "peer", "name", peer)
        if let address { try ip("addr", "add", address + "/24", "dev", link) }
        try ip("link", "set", peer, "up")
        try ip("link", "set", link, "up")
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var description: String
    }

    private static func run(_ arguments: [String], stdin: String? = nil) throws {
        let result = try ProcessResult.run(ip ?? "ip", arguments, stdin: stdin.map { Data($0.utf8) })
        guard result.status == 0 else {
            throw CommandFailed(description: "ip \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }
}
