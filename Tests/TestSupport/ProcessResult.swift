import Foundation

/// What a finished process printed and how it exited.
public struct ProcessResult: Sendable {
    /// The exit status (or 128 + signal when it was killed).
    public var status: Int32
    /// Standard output, as text.
    public var stdout: String
    /// Standard error, as text.
    public var stderr: String
    /// Whether it ended by a signal (a crash).
    public var crashed: Bool

    /// Runs `executable` with `arguments`, optional extra environment and standard input, and waits.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           stdin: Data? = nil, workingDirectory: String? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "IMGPOLICY_NETWORK")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently so that a full pipe cannot block the child.
        let errorData = ErrorCollector(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errorData.wait(), as: UTF8.self),
                             crashed: process.terminationReason == .uncaughtSignal)
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorCollector: @unchecked Sendable {
    // `data` is written by the reading thread before `done` is signalled, and read only after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
