import Support
import HTTPSemantics

/// Opening a file of the cache's layout: a regular file only, never through a symbolic link,
/// never blocking (a FIFO or device is reported, never opened for reading).
extension DiskCacheFolder {
    /// What opening a name found.
    enum RegularFile {
        /// Open (the caller closes it), with its `fstat`.
        case open(Int32, stat)
        case missing
        /// Something else under the name (a FIFO, device, socket, folder or symbolic link).
        case notRegular(stat)
        case failed(SystemError)
    }

    /// Opens `name` in the folder open at `folderFD` (`path` names it in errors) with `flags`
    /// plus `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`: `lstat` first, `fstat` again once open (it may
    /// have been swapped since).
    static func openRegular(_ name: String, in folderFD: Int32, path: String, flags: Int32) -> RegularFile {
        var info = stat()
        guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: path, errno: errno, action: "cannot read"))
        }
        guard FileIO.isRegular(info) else { return .notRegular(info) }
        let fd = DescriptorReserve.admit(openat(folderFD, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        guard fd >= 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: path, errno: errno, action: "cannot open"))
        }
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            return .failed(SystemError(path: path, errno: code, action: "cannot read"))
        }
        guard FileIO.isRegular(info) else {
            close(fd)
            return .notRegular(info)
        }
        return .open(fd, info)
    }

    /// The whole of the regular file open at `fd` (of `info`'s size, under 2 GiB), or no bytes.
    static func readWhole(_ fd: Int32, _ info: stat) -> [UInt8] {
        guard info.st_size >= 0, info.st_size < 1 << 31 else { return [] }
        return FileIO.readAll(fd, size: Int(info.st_size)) ?? []
    }
}
