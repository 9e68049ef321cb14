#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Locking
import Policy

/// A fresh folder under the system's temporary directory for a simulation's disk cache, never
/// the user's; `remove()` deletes it with its contents.
struct TemporaryCacheFolder {
    let path: String

    init() throws {
        // Listening before the folder exists: a signal between the two would leave it behind.
        _ = Self.installSignalSources
        let base = Self.systemTemporaryFolder
        var template = Array((base + "/imgpolicy-simulate-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw CommandFailure("cannot make a temporary folder for the simulation's cache in \(base): \(errnoText(errno))", status: .ioError)
        }
        path = String(cString: made)
        Self.removeOnSignal(path)
    }

    /// `$TMPDIR` when it is an absolute path, else `/tmp`.
    static var systemTemporaryFolder: String {
        if let value = getenv("TMPDIR").map({ String(cString: $0) }), value.hasPrefix("/") {
            return value.count > 1 && value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        return "/tmp"
    }

    /// The folders to remove if the process is stopped by SIGINT, SIGTERM or SIGHUP (Ctrl-C,
    /// `timeout`, a CI runner) before `remove()`: a stopped simulation leaves nothing in /tmp.
    private static let live = Locked<Set<String>>([])
    // Created once, kept for the life of the process; the sources run their handler on a queue of their own.
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []
    private static let installSignalSources: Void = {
        let queue = DispatchQueue(label: "imgpolicy.simulate.signals")
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                // The cache's threads may still be writing: try again until the folder is gone.
                for path in live.withLock({ $0 }) {
                    for _ in 0..<50 where access(path, F_OK) == 0 {
                        try? FileManager.default.removeItem(atPath: path)
                    }
                }
                _exit(128 + number)
            }
            source.resume()
            signalSources.append(source)
        }
    }()

    private static func removeOnSignal(_ path: String) {
        live.withLock { _ = $0.insert(path) }
    }

    func remove() {
        _ = Self.live.withLock { $0.remove(path) }
        try? FileManager.default.removeItem(atPath: path)
    }
}
