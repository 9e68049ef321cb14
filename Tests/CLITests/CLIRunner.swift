import Foundation
import Testing
import TestSupport

/// Runs the built `imgpolicy` with a private settings folder, so that no test reads or writes the
/// user's real settings. A run that has not ended after `deadline` is killed and recorded as a
/// hang, so that a process that would freeze (a FIFO opened without `O_NONBLOCK`) fails its test
/// instead of the whole suite.
struct CLIRunner {
    let home = TemporaryFolder()

    /// How long a run may take before it counts as a hang: far beyond any run of the tests.
    /// `IMGPOLICY_TEST_SLOWDOWN` (set by `scripts/tsan.sh`, whose processes run several times
    /// slower) multiplies it.
    static let deadline: Double = 30 * slowdown

    /// How many times slower than a plain build the processes under test run (1 unless told).
    static let slowdown: Double = {
        let text = ProcessInfo.processInfo.environment["IMGPOLICY_TEST_SLOWDOWN"] ?? ""
        guard let factor = Double(text), factor >= 1, factor <= 100 else { return 1 }
        return factor
    }()

    /// What a finished run printed and how it exited.
    struct Result: Sendable {
        /// The exit status (or 128 + signal when it was killed).
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether it ended by a signal (a crash, or killed as hung).
        var crashed: Bool
        /// For a run killed as hung: what the process was doing (its state and each thread's
        /// kernel wait channel, from `/proc`), or that it had already ended unnoticed.
        var stateWhenKilled: String?
    }

    func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) async throws -> Result {
        let executable = PackagePaths.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable),
                     "build the package first (swift build): \(executable) is missing")
        var env = ["XDG_CONFIG_HOME": home.file("config"), "HOME": home.path]
        env.merge(environment) { _, new in new }
        let input = stdin.map { Data($0.utf8) }, environment = env
        // The process is waited for on a thread of its own, never on the cooperative pool.
        let (result, hung) = try await offThePool {
            try Self.run(executable, arguments, environment: environment, stdin: input, workingDirectory: PackagePaths.root)
        }
        #expect(!hung, "imgpolicy \(arguments.joined(separator: " ")) still ran after \(Self.deadline) s and was killed; \(result.stateWhenKilled ?? "")")
        #expect(hung || !result.crashed, "imgpolicy crashed: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
        return result
    }

    /// The settings file this runner's commands use by default.
    var settingsPath: String { home.file("config/imgpolicy/settings.json") }

    /// Runs `executable` and waits, killing it after `deadline` seconds; returns whether it was killed.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    stdin: Data?, workingDirectory: String) throws -> (Result, hung: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "IMGPOLICY_NETWORK")
        env.removeValue(forKey: "IMGPOLICY_LOG_LEVEL")
        env.merge(environment) { _, new in new }
        process.environment = env
        process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let killed = LockedList<String>()
        Thread.detachNewThread {
            if ended.wait(timeout: .now() + deadline) == .timedOut {
                killed.append(describe(process.processIdentifier))
                kill(process.processIdentifier, SIGKILL)
            }
        }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read both pipes at once so that a full pipe cannot block the child.
        let errors = LockedList<Data>()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            errors.append(err.fileHandleForReading.readDataToEndOfFile())
            errorsRead.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        let result = Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                            stderr: String(decoding: errors.values.first ?? Data(), as: UTF8.self),
                            crashed: process.terminationReason == .uncaughtSignal,
                            stateWhenKilled: killed.values.first)
        return (result, !killed.values.isEmpty)
    }

    /// What process `pid` is doing, read from `/proc` just before it is killed: its state
    /// (`R` running, `S` sleeping, `D` in I/O, `Z` ended but not yet reaped) and the kernel wait
    /// channel of each thread, so that a hang in a CI log says where it was.
    static func describe(_ pid: pid_t) -> String {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
            return "process \(pid) had already ended (its end was not reported in time)"
        }
        let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let channels = tasks.sorted().prefix(32).map { task -> String in
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? "?"
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? "?"
            return "\(comm.trimmingCharacters(in: .whitespacesAndNewlines)):\(wchan.isEmpty ? "-" : wchan)"
        }
        let unreaped = state == "Z" ? " (it had ended, but its end was never reported: a descriptor of Foundation's held by another child?)" : ""
        return "process \(pid) state \(state)\(unreaped), threads \(channels.joined(separator: " "))"
    }
}
