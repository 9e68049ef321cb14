#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the last few file descriptors of the process's limit free for the runtime: every
/// descriptor the package opens itself passes through `admit(_:)`, which refuses one numbered
/// among the last `reserved` (8) under the limit (closing it, `errno` = `EMFILE`), as if the limit
/// were `reserved` lower.
///
/// Why: on Linux, libdispatch (under Swift's concurrency) opens `/proc/<tid>/stat` of its
/// workers every second while work is queued, and stops the process with an illegal instruction
/// when that open fails; it also needs a descriptor to arm a timer. A process whose own files and
/// sockets took every descriptor would die there instead of reporting "too many open files".
/// The kernel always hands out the lowest free number, so a descriptor numbered at or above
/// `limit - reserved` means fewer than `reserved` were free: refusing it keeps them free.
///
/// ```swift
/// let fd = DescriptorReserve.admit(open(path, O_RDONLY | O_CLOEXEC))
/// guard fd >= 0 else { throw error(errno) }     // EMFILE when only the reserve was left
/// ```
///
/// Thread safety: every method may be called from any thread at once.
package enum DescriptorReserve {
    /// Descriptors kept free below the limit: libdispatch's monitor needs one at a time, but
    /// several of the package's threads may each hold one for a moment (between an open past the
    /// ceiling and its close), and other libraries (libcurl's socket pair, a resolver) open their
    /// own.
    package static let reserved: Int32 = 8

    /// The lowest number refused: the soft limit minus `reserved`, read once; `Int32.max` when
    /// the limit is unknown or too large to matter.
    package static let ceiling: Int32 = {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < numericCast(Int32.max) else { return Int32.max }
        return max(3, Int32(limit.rlim_cur) - reserved)
    }()

    /// `fd` when it is below `ceiling` (or -1, passed through); else closes it, sets `errno` to
    /// `EMFILE` and returns -1.
    package static func admit(_ fd: Int32) -> Int32 {
        guard fd >= ceiling else { return fd }
        close(fd)
        errno = EMFILE
        return -1
    }
}
