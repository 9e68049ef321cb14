import Policy
import Support
import HTTPSemantics

/// The sweep of stale temporaries: those a killed writer left, which no live writer holds locked.
extension DiskCacheFolder {
    /// Removes the cache's own temporary files that no live writer holds (those it can lock at
    /// once): those in `tmp/`, and the marker's temporaries (`..imgpolicy-cache.tmp-…`) a writer
    /// killed while it wrote the marker left in the folder itself. The ones still held are
    /// counted, with their bytes. Only regular files of those names are removed, never through a
    /// symbolic link.
    func sweepTemporaries() -> (removed: Int, held: Int, heldBytes: Int, failures: [SystemError]) {
        var result = (removed: 0, held: 0, heldBytes: 0, failures: [SystemError]())
        for name in FileIO.names(in: descriptor) ?? [] where Self.isMarkerWriterTemporary(name) {
            sweepTemporary(name, in: descriptor, path: path + "/" + name, into: &result)
        }
        let folderFD: Int32
        switch openSubfolder(Self.temporaryFolderName, create: false) {
        case .success(let fd): folderFD = fd
        case .failure(let error):
            if error.errno != ENOENT { result.failures.append(error) }
            return result
        }
        defer { close(folderFD) }
        for name in FileIO.names(in: folderFD) ?? [] where Self.isTemporaryName(name) {
            sweepTemporary(name, in: folderFD, path: path + "/tmp/" + name, into: &result)
        }
        return result
    }

    /// Removes the temporary `name` of the folder open at `folderFD` when it is a regular file
    /// (opened without following a link, non-blocking) that no writer holds locked.
    private func sweepTemporary(_ name: String, in folderFD: Int32, path filePath: String,
                                into result: inout (removed: Int, held: Int, heldBytes: Int, failures: [SystemError])) {
        let fd = DescriptorReserve.admit(openat(folderFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, FileIO.isRegular(info) else { return }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            result.held += 1
            result.heldBytes += Int(info.st_size)
            return
        }
        // Only the very file locked: a writer may have renamed it away meanwhile.
        var current = stat()
        guard fstatat(folderFD, name, &current, AT_SYMLINK_NOFOLLOW) == 0, current.st_ino == info.st_ino, current.st_dev == info.st_dev else { return }
        if unlinkat(folderFD, name, 0) == 0 {
            result.removed += 1
        } else if errno != ENOENT {
            result.failures.append(SystemError(path: filePath, errno: errno, action: "cannot remove the stale temporary file"))
        }
    }
}
