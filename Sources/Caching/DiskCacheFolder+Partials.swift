import HTTPSemantics
import Support

/// The `partial/` subfolder: one file per URL (`partial/<32 hex digits of the URL's hash>`),
/// reached like entries: relative to the folder, never through a symbolic link, opened
/// non-blocking and checked regular before any read.
extension DiskCacheFolder {
    static let partialFolderName = "partial"

    /// The path of the partial body for `key`.
    func partialPath(_ key: Hash128) -> String {
        path + "/" + Self.partialFolderName + "/" + key.description
    }

    /// What reading a partial file found.
    enum PartialRead {
        case missing
        /// A regular file's bytes and modification time (seconds since 1970).
        case bytes([UInt8], modified: Int64)
        /// Something other than a regular file under the name: its name was removed, never
        /// opened (`removal`: why it could not be).
        case notRegular(kind: String, removal: SystemError?)
        case failed(SystemError)
    }

    /// Writes `file` as the partial body for `key`: a locked temporary in `tmp/`, synced, then
    /// renamed over the name (which replaces whatever was there, a symbolic link included, without
    /// following it).
    func writePartial(_ file: [UInt8], key: Hash128) throws(DiskCacheError) {
        let partialFD = try openPartialFolder(create: true)
        defer { close(partialFD) }
        try writeThroughTemporary(file, as: key.description, in: partialFD, path: partialPath(key), what: "partial body", prefix: "partial-", sync: true)
    }

    /// Reads the partial file for `key` whole: never opens anything but a regular file in the real
    /// `partial/` folder; a FIFO, device, socket or symbolic link under its name is removed unopened.
    func readPartial(_ key: Hash128) -> PartialRead {
        let partialFD: Int32
        switch openSubfolder(Self.partialFolderName, create: false) {
        case .success(let fd): partialFD = fd
        case .failure(let error): return error.errno == ENOENT ? .missing : .failed(error)
        }
        defer { close(partialFD) }
        switch Self.openRegular(key.description, in: partialFD, path: partialPath(key), flags: O_RDONLY) {
        case .missing: return .missing
        case .failed(let error): return .failed(error)
        case .notRegular(let info): return removeNonRegularPartial(info, partialFD: partialFD, key: key)
        case .open(let fd, let info):
            defer { close(fd) }
            return .bytes(Self.readWhole(fd, info), modified: FileIO.modificationTime(info))
        }
    }

    /// Appends to the partial file for `key` under `flock(LOCK_EX)`: `change` gets the file's
    /// bytes and returns where the valid part ends and what to write there (nil: nothing); the
    /// file is cut there, written, and synced (`fdatasync`). Returns the new size, nil when there
    /// is no regular file to append to.
    func appendPartial(_ key: Hash128, _ change: ([UInt8]) -> (end: Int, bytes: [UInt8])?) -> Result<Int?, SystemError> {
        let partialFD: Int32
        switch openSubfolder(Self.partialFolderName, create: false) {
        case .success(let fd): partialFD = fd
        case .failure(let error): return error.errno == ENOENT ? .success(nil) : .failure(error)
        }
        defer { close(partialFD) }
        let name = key.description
        let fd: Int32
        switch Self.openRegular(name, in: partialFD, path: partialPath(key), flags: O_RDWR) {
        case .missing, .notRegular: return .success(nil)
        case .failed(let error): return .failure(error)
        case .open(let opened, _): fd = opened
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return .failure(SystemError(path: partialPath(key), errno: errno, action: "cannot lock")) }
        defer { flock(fd, LOCK_UN) }
        // Renamed over or removed while this process waited for the lock: not this file any more.
        var info = stat(), current = stat()
        guard fstat(fd, &info) == 0, FileIO.isRegular(info), info.st_nlink > 0, info.st_size >= 0, info.st_size < 1 << 31,
              fstatat(partialFD, name, &current, AT_SYMLINK_NOFOLLOW) == 0, current.st_ino == info.st_ino, current.st_dev == info.st_dev,
              let file = FileIO.readAll(fd, size: Int(info.st_size)) else { return .success(nil) }
        guard let (end, bytes) = change(file) else { return .success(nil) }
        if end != file.count && ftruncate(fd, off_t(end)) != 0 {
            return .failure(SystemError(path: partialPath(key), errno: errno, action: "cannot cut the torn end"))
        }
        if let code = FileIO.writeAll(fd, bytes, at: end) {
            _ = ftruncate(fd, off_t(end))
            return .failure(SystemError(path: partialPath(key), errno: code, action: "cannot append to the partial body"))
        }
        guard fdatasync(fd) == 0 else { return .failure(SystemError(path: partialPath(key), errno: errno, action: "cannot sync the partial body")) }
        return .success(end + bytes.count)
    }

    /// Removes the partial file for `key` (a missing one is not a failure).
    func removePartial(_ key: Hash128) -> SystemError? {
        let partialFD: Int32
        switch openSubfolder(Self.partialFolderName, create: false) {
        case .success(let fd): partialFD = fd
        case .failure(let error): return error.errno == ENOENT ? nil : error
        }
        defer { close(partialFD) }
        if unlinkat(partialFD, key.description, 0) == 0 || errno == ENOENT { return nil }
        return SystemError(path: partialPath(key), errno: errno, action: "cannot remove")
    }

    /// Every partial file: regular ones with their size and modification time; names that are
    /// not regular files are removed unopened (counted in `removed`); other names are left alone.
    func scanPartials() -> (partials: [(key: Hash128, size: Int, modified: Int64)], removed: Int, failures: [SystemError]) {
        var result = (partials: [(key: Hash128, size: Int, modified: Int64)](), removed: 0, failures: [SystemError]())
        let partialFD: Int32
        switch openSubfolder(Self.partialFolderName, create: false) {
        case .success(let fd): partialFD = fd
        case .failure(let error):
            if error.errno != ENOENT { result.failures.append(error) }
            return result
        }
        defer { close(partialFD) }
        for name in FileIO.names(in: partialFD) ?? [] {
            guard let key = Hash128(hex: name), key.description == name else { continue }
            var info = stat()
            guard fstatat(partialFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if FileIO.isRegular(info) {
                result.partials.append((key, Int(info.st_size), FileIO.modificationTime(info)))
            } else if !FileIO.isFolder(info) {
                if unlinkat(partialFD, name, 0) == 0 {
                    result.removed += 1
                } else if errno != ENOENT {
                    result.failures.append(SystemError(path: partialPath(key), errno: errno, action: "cannot remove"))
                }
            }
        }
        return result
    }

    private func openPartialFolder(create: Bool) throws(DiskCacheError) -> Int32 {
        switch openSubfolder(Self.partialFolderName, create: create) {
        case .success(let fd): return fd
        case .failure(let error): throw error.cacheError
        }
    }

    private func removeNonRegularPartial(_ info: stat, partialFD: Int32, key: Hash128) -> PartialRead {
        let kind = FileIO.kind(info)
        guard !FileIO.isFolder(info) else {
            return .notRegular(kind: kind, removal: SystemError(path: partialPath(key), errno: EISDIR, action: "cannot remove (a folder under a partial body's name)"))
        }
        if unlinkat(partialFD, key.description, 0) != 0 && errno != ENOENT {
            return .notRegular(kind: kind, removal: SystemError(path: partialPath(key), errno: errno, action: "cannot remove"))
        }
        return .notRegular(kind: kind, removal: nil)
    }
}
