import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport
import Support


/// `kill -9` on a real process that saves and appends a partial body: whatever is read back
/// afterwards is a byte-exact prefix of the body, never a torn or damaged byte.
///
/// The writer is this very test binary, started again with this test as its filter and
/// `IMGPOLICY_PARTIAL_WRITER_FOLDER` set: in that process the test is the writer (it resumes the
/// partial body it finds, appends 2 MiB at a time, starts over at the end) until it is killed.
struct DiskCachePartialCrashTests {
    static let writerVariable = "IMGPOLICY_PARTIAL_WRITER_FOLDER"
    static let total = 8 << 20
    static let url = testURL(4242)
    static let validator = #""crash-v1""#
    static let limits = DiskCache.PartialLimits(minimumBytes: 1, largest: 32 << 20, totalBytes: 64 << 20, lifetime: 86_400)
    static let rounds = 10

    static func wholeBody() -> [UInt8] {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        var bytes = [UInt8](repeating: 0, count: total)
        bytes.withUnsafeMutableBytes { raw in
            for position in stride(from: 0, to: total, by: 8) { raw.storeBytes(of: generator.next(), toByteOffset: position, as: UInt64.self) }
        }
        return bytes
    }

    /// What the series of kills found.
    struct Outcome: Sendable {
        var failures: [String] = []
        var killedWhileRunning = 0
        var served = 0
        var longestServed = 0
    }

    @Test func aPartialBodyWrittenByAKilledProcessIsOnlyEverReadAsCheckedBytes() async throws {
        if let folder = ProcessInfo.processInfo.environment[Self.writerVariable] {
            // The child: until killed, or until the test that started it is gone (a writer whose
            // parent died, a runner stopped by a timeout, must not write for ever as an orphan).
            try Self.write(into: folder, parent: getppid())
            return
        }
        // The series blocks (processes, polling): on a thread of its own, never the cooperative pool.
        let outcome = try await offThePool { try Self.series() }
        #expect(outcome.failures.isEmpty, "\(outcome.failures.prefix(10).joined(separator: "\n"))")
        #expect(outcome.killedWhileRunning == Self.rounds, "only \(outcome.killedWhileRunning) kills hit a running writer")
        #expect(outcome.served >= Self.rounds / 2, "a partial body was read back after only \(outcome.served) kills")
        #expect(outcome.longestServed > 512 << 10, "the writers never got past their first save")
    }

    /// Starts the writer and kills it (SIGKILL) `rounds` times, reading the partial body back
    /// through a new `DiskCache` after each kill.
    static func series() throws -> Outcome {
        var outcome = Outcome()
        let folder = TemporaryFolder()
        let whole = wholeBody()
        let path = folder.path + "/partial/" + Hash128(of: url.absoluteString).description
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var random = SeededGenerator(seed: 0x9A87, label: "partial writers killed")
        for round in 0..<rounds {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["--testing-library", "swift-testing", "--filter", "aPartialBodyWrittenByAKilledProcessIsOnlyEverReadAsCheckedBytes"]
            var environment = ProcessInfo.processInfo.environment
            environment[writerVariable] = folder.path
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let before = size(path)
            try process.run()
            // Wait for the state (the file grew by a random 0.5–3.5 MiB, or started over), looking
            // every 0.2 ms so that the kill lands within an append.
            let growth = 512 << 10 + Int(random.next() % UInt64(3 << 20))
            let deadline = ContinuousClock.now + .seconds(60)
            while process.isRunning, ContinuousClock.now < deadline {
                let now = size(path)
                if now >= before + growth || now < before { break }
                usleep(200)
            }
            usleep(useconds_t(random.next() % 3_000))
            if process.isRunning { outcome.killedWhileRunning += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            let cache = try DiskCache(folder: folder.path, capacity: 1 << 30, partialLimits: limits)
            if let partial = cache.partial(for: url) {
                outcome.served += 1
                outcome.longestServed = max(outcome.longestServed, partial.bytes.count)
                if !whole.starts(with: partial.bytes) {
                    outcome.failures.append("round \(round): served \(partial.bytes.count) bytes that are not the body's first")
                }
                if partial.totalLength != total || partial.validator != validator {
                    outcome.failures.append("round \(round): total \(partial.totalLength), validator \(partial.validator)")
                }
            }
        }
        return outcome
    }

    /// The writer: resumes what it finds, appends until one byte short of the end, starts over;
    /// stops when `parent` (the test that started it) is no longer its parent.
    static func write(into folder: String, parent: pid_t) throws {
        let cache = try DiskCache(folder: folder, capacity: 1 << 30, partialLimits: limits)
        let whole = wholeBody()
        while getppid() == parent {
            var offset: Int
            if let partial = cache.partial(for: url) {
                offset = partial.offset
            } else {
                try cache.savePartial(Array(whole[..<(256 << 10)]), for: url, validator: validator, totalLength: total)
                offset = 256 << 10
            }
            while offset < total - 1 {
                let count = min(2 << 20, total - 1 - offset)
                guard try cache.appendPartial(Array(whole[offset..<(offset + count)]), for: url, at: offset) else { break }
                offset += count
            }
            cache.discardPartial(for: url)
        }
    }

    static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
