#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The type of a file as `stat` reports it, named for messages (`is a FIFO, not a regular file`).
package enum FileKind: Sendable, Equatable {
    case regular, directory, fifo, characterDevice, blockDevice, socket, symbolicLink

    /// The kind in `mode` (`st_mode`), or nil for a type this code does not know.
    package init?(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        case S_IFLNK: self = .symbolicLink
        default: return nil
        }
    }

    /// The kind of the file at `path` (`lstat` when `followingLinks` is false), or nil with
    /// `errno` set when it cannot be examined.
    package init?(path: String, followingLinks: Bool) {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        self.init(mode: info.st_mode)
    }

    /// The kind with its article, for a sentence: `a FIFO`, `a directory`.
    package var article: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .fifo: "a FIFO"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .socket: "a socket"
        case .symbolicLink: "a symbolic link"
        }
    }
}
