#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Support
import Policy

/// A fresh folder under the system's temporary directory for a simulation's disk cache, never
/// the user's; `remove()` deletes it with its contents.
///
/// The run's folder, `$TMPDIR/imgpolicy-simulate-XXXXXX`, holds `owner` and the cache (`cache/`,
/// `path`). `owner` says which process made it (`imgpolicy simulate`, its PID and its start time
/// in clock ticks since boot, `/proc/PID/stat`'s 22nd field) and stays locked (`flock`) while that
/// process lives: the kernel releases the lock when it dies, however it dies. A run killed with
/// SIGKILL cannot remove its folder (SIGINT, SIGTERM and SIGHUP do: below), so each new run first
/// removes the folders that are provably dead (`sweepDeadFolders`).
package struct TemporaryCacheFolder {
    /// The run's folder.
    package let folder: String
    /// The cache's folder, inside it.
    package let path: String

    /// The prefix of every run's folder in the temporary directory.
    package static let prefix = "imgpolicy-simulate-"
    /// The record of the run that owns a folder.
    package static let ownerName = "owner"

    /// Starts listening for SIGINT, SIGTERM and SIGHUP (once): called first thing by `simulate`,
    /// long before any folder exists, since libdispatch may register a signal source after
    /// `resume()` returns, and a signal before that would be ignored.
    package static func listenForStopSignals() {
        _ = installSignalSources
    }

    package init() throws {
        // Listening before the folder exists: a signal between the two would leave it behind.
        Self.listenForStopSignals()
        let base = Self.systemTemporaryFolder
        Self.sweepDeadFolders(in: base)
        var template = Array((base + "/" + Self.prefix + "XXXXXX").utf8CString)
        // Made and registered under the lock the signal handler takes to read the folders: a
        // signal in between waits for the registration (it once came right after `mkdtemp`,
        // before the folder was known, and the folder was left behind).
        let made = Self.live.withLock { live -> Result<String, SimulationSetupError> in
            guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
                return .failure(SimulationSetupError(description: "cannot make a temporary folder for the simulation's cache in \(base): \(errnoText(errno))"))
            }
            let folder = String(cString: made)
            live.insert(folder)
            return .success(folder)
        }
        switch made {
        case .success(let made): folder = made
        case .failure(let error): throw error
        }
        path = folder + "/cache"
        do {
            try Self.writeOwner(in: folder)
            guard mkdir(path, 0o700) == 0 else {
                throw SimulationSetupError(description: "cannot make the simulation's cache folder \(path): \(errnoText(errno))")
            }
        } catch {
            remove()
            throw error
        }
    }

    /// `$TMPDIR` when it is an absolute path, else `/tmp`.
    package static var systemTemporaryFolder: String {
        if let value = getenv("TMPDIR").map({ String(cString: $0) }), value.hasPrefix("/") {
            return value.count > 1 && value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        return "/tmp"
    }

    // MARK: - Owner

    /// Creates `folder/owner`, locks it for the life of the process (its descriptor is never
    /// closed), then writes who owns it. Locked before it says anything: a sweeper that finds
    /// it empty or half-written cannot prove the run dead, and leaves it.
    private static func writeOwner(in folder: String) throws(SimulationSetupError) {
        let ownerPath = folder + "/" + ownerName
        let fd = DescriptorReserve.admit(open(ownerPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600))
        guard fd >= 0, flock(fd, LOCK_EX) == 0, let start = startTime(of: getpid()) else {
            throw SimulationSetupError(description: "cannot write \(ownerPath): \(errnoText(errno))")
        }
        let record = Array("imgpolicy simulate\npid \(getpid())\nstart \(start)\n".utf8)
        guard record.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == record.count else {
            throw SimulationSetupError(description: "cannot write \(ownerPath): \(errnoText(errno))")
        }
    }

    /// The start time of process `pid` in clock ticks since boot (`/proc/PID/stat`, field 22),
    /// nil when there is no such process (or no `/proc`).
    package static func startTime(of pid: pid_t) -> UInt64? {
        guard let bytes = try? DataFileReader.read("/proc/\(pid)/stat"),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the command name in parentheses: field 3 (the state) onwards.
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    /// Removes the folders of earlier runs in `base` that are provably dead, and only those:
    /// named `imgpolicy-simulate-…`, real folders (no symbolic link) of this user, holding an
    /// `owner` record of this user that says `imgpolicy simulate`, a PID and a start time, whose
    /// lock this process can take (no live run holds it), and whose process is gone (no process
    /// with that PID, or one that started at another time). A folder without such a record (an
    /// earlier version's, another program's, a run that has not written it yet), another user's,
    /// or a live run's is left as it is, except a stillborn one (`removeIfStillborn`: empty but for
    /// an empty record, unchanged for a minute). Failures are silent: the folder stays for the next run.
    package static func sweepDeadFolders(in base: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix(prefix) {
            let candidate = base + "/" + name
            var info = stat()
            guard lstat(candidate, &info) == 0, FileKind(mode: info.st_mode) == .directory, info.st_uid == geteuid() else { continue }
            let folderFD = DescriptorReserve.admit(open(candidate, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
            guard folderFD >= 0 else { continue }
            defer { close(folderFD) }
            let folderChanged = info.st_mtim.tv_sec
            let ownerFD = DescriptorReserve.admit(openat(folderFD, ownerName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
            guard ownerFD >= 0 else {
                if errno == ENOENT { removeIfStillborn(candidate, changed: folderChanged) }
                continue
            }
            defer { close(ownerFD) }
            guard fstat(ownerFD, &info) == 0, FileKind(mode: info.st_mode) == .regular, info.st_uid == geteuid(),
                  info.st_size < 256, flock(ownerFD, LOCK_EX | LOCK_NB) == 0 else { continue }
            guard info.st_size > 0 else {
                removeIfStillborn(candidate, changed: folderChanged)
                continue
            }
            var record = [UInt8](repeating: 0, count: Int(info.st_size))
            guard record.withUnsafeMutableBytes({ pread(ownerFD, $0.baseAddress, $0.count, 0) }) == record.count,
                  let owner = Owner(record), !owner.isAlive else { continue }
            // Still holding the lock: no run can take the folder meanwhile.
            try? FileManager.default.removeItem(atPath: candidate)
        }
    }

    /// How long a folder may stay without its owner's record before it is taken for a run killed
    /// between making it and writing the record (a run writes it at once after `mkdtemp`).
    package static let stillbornAge: Int = 60

    /// Removes `folder` when it holds nothing but an empty `owner` (or nothing at all) and has not
    /// changed for `stillbornAge` seconds: a run killed in the instant between `mkdtemp` and its
    /// record. Anything else in it (another program's files) keeps it.
    private static func removeIfStillborn(_ folder: String, changed: Int) {
        guard time(nil) - changed >= stillbornAge,
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder),
              names.allSatisfy({ $0 == ownerName }) else { return }
        if !names.isEmpty { _ = unlink(folder + "/" + ownerName) }
        _ = rmdir(folder)
    }

    /// What an `owner` record says.
    private struct Owner {
        var pid: pid_t
        var start: UInt64

        init?(_ bytes: [UInt8]) {
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            guard lines.count == 3, lines[0] == "imgpolicy simulate",
                  lines[1].hasPrefix("pid "), let pid = pid_t(lines[1].dropFirst(4)), pid > 0,
                  lines[2].hasPrefix("start "), let start = UInt64(lines[2].dropFirst(6)) else { return nil }
            self.pid = pid
            self.start = start
        }

        /// Whether the process that wrote the record still runs (the same PID, started then).
        var isAlive: Bool { TemporaryCacheFolder.startTime(of: pid) == start }
    }

    // MARK: - Removal

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

    package func remove() {
        _ = Self.live.withLock { $0.remove(folder) }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
