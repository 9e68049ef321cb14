#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call that failed on a path: the support floor's one error, which each module above
/// turns into its own public error (`DataFileError`, `DiskCacheError`…) with the path kept.
///
/// ```swift
/// throw SystemError(path: path, errno: errno, action: "cannot create a temporary file")
/// // message: "cannot create a temporary file: no space left on device"
/// ```
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or folder the call was about.
    package var path: String
    /// The `errno` it failed with; 0 when `action` says it all.
    package var errno: Int32
    /// What was being done (`cannot create a temporary file`), or the whole message.
    package var action: String

    /// A failure of `action` on `path` with `errno` (0: `action` is the whole message).
    package init(path: String, errno: Int32, action: String) {
        self.path = path
        self.errno = errno
        self.action = action
    }

    /// `action: errno text`, or `action` alone when `errno` is 0.
    package var message: String { errno == 0 ? action : "\(action): \(errnoText(errno).lowercased())" }

    /// `path: message`.
    package var description: String { "\(path): \(message)" }
}
