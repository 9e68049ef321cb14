import Foundation

/// Starts a child process whose standard streams are `/dev/null` and which inherits no other
/// descriptor of the test process.
///
/// A child started by a bare `posix_spawn` inherits every descriptor open at that moment without
/// close-on-exec: the write ends of other tests' pipes, and the socket through which Foundation's
/// `Process` learns that its child ended. A long-lived child (a daemonised nginx) then holds them,
/// and a concurrent test waits for an end that is never reported: one TSan run in CI killed an
/// `imgpolicy` that had ended 90 s before (state Z, never reaped). Every test that spawns a
/// process by hand goes through here.
public enum ChildSpawn {
    /// Spawns `executable` with `arguments` (without the program name) and `environment`
    /// (`NAME=value`; the test process's own when nil). Returns the child's PID, or the
    /// `posix_spawn` error as a thrown `ChildSpawnError`.
    public static func spawn(_ executable: String, _ arguments: [String], environment: [String]? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        closeInheritedDescriptors(&actions)
        // Signals as a fresh process has them: none blocked, every one at its default action (a
        // test runner's blocked or ignored SIGTERM would otherwise make `stop()` a no-op).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildSpawnError(executable: executable, code: status) }
        return pid
    }

    /// Waits for `pid` to end; returns its exit status (128 + signal when a signal ended it; -1
    /// when it cannot be waited for, e.g. it is not our child) and its resource usage.
    public static func wait(_ pid: pid_t) -> (status: Int32, usage: rusage) {
        var status: Int32 = 0
        var usage = rusage()
        var result: pid_t
        repeat { result = wait4(pid, &status, 0, &usage) } while result < 0 && errno == EINTR
        guard result == pid else { return (-1, usage) }
        let signal = status & 0x7F
        return (signal == 0 ? (status >> 8) & 0xFF : 128 + signal, usage)
    }

    /// Closes every descriptor from 3 up in the child: with glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later, looked up at run time since the
    /// Swift module does not declare it), else one close per descriptor open now.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}

/// `posix_spawn` refused to start a program.
public struct ChildSpawnError: Error, CustomStringConvertible {
    /// The program.
    public let executable: String
    /// The error number `posix_spawn` returned.
    public let code: Int32

    /// `cannot start PROGRAM: ERRNO TEXT`.
    public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
}
