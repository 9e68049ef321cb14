import Policy
import Support
import HTTPSemantics

/// The entries in their shards: reading, listing, writing (through a locked temporary in `tmp/`)
/// and removing them, never through a symbolic link, never blocking on a file that is not regular.
extension DiskCacheFolder {
    /// What reading an entry found.
    enum ReadOutcome {
        case missing
        /// A regular file's bytes, and its modification time (seconds since 1970).
        case bytes([UInt8], modified: Int64)
        /// Something other than a regular file under an entry's name (a FIFO, a device, a folder,
        /// a symbolic link); its name was removed when it could be (`removal` is the failure).
        case notRegular(kind: String, removal: SystemError?)
        case failed(SystemError)
    }

    /// Reads the entry for `key`: never opens anything but a regular file inside a real shard
    /// folder, and never blocks on one that is not.
    func readEntry(_ key: Hash128) -> ReadOutcome {
        let (shard, name) = Self.entryName(key)
        let shardFD = DescriptorReserve.admit(openat(descriptor, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard shardFD >= 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: path + "/" + shard, errno: errno, action: "cannot open the shard folder"))
        }
        defer { close(shardFD) }
        switch Self.openRegular(name, in: shardFD, path: entryPath(key), flags: O_RDONLY) {
        case .missing: return .missing
        case .failed(let error): return .failed(error)
        case .notRegular(let info): return removeNonRegular(info, shardFD: shardFD, key: key)
        case .open(let fd, let info):
            defer { close(fd) }
            return .bytes(Self.readWhole(fd, info), modified: FileIO.modificationTime(info))
        }
    }

    private func removeNonRegular(_ info: stat, shardFD: Int32, key: Hash128) -> ReadOutcome {
        .notRegular(kind: FileIO.kind(info), removal: removeEntryName(Self.entryName(key).name, in: shardFD, shard: Self.entryName(key).shard))
    }

    /// Why a folder in the place of one of the cache's files (`what`: "entry") is left: it holds
    /// something, which is not the cache's.
    static func foreignFolderMessage(_ what: String = "entry") -> String {
        "a folder that is not empty is in the place of the \(what); the cache removes only its own files (remove it yourself)"
    }

    /// The URL of the entry for `key`, its file's size and its body's (the image's) length,
    /// reading only its header (for listings).
    func readHeader(_ key: Hash128) -> (url: String, size: Int, imageBytes: Int)? {
        let (shard, name) = Self.entryName(key)
        let shardFD = DescriptorReserve.admit(openat(descriptor, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard shardFD >= 0 else { return nil }
        defer { close(shardFD) }
        var info = stat()
        guard fstatat(shardFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, FileIO.isRegular(info) else { return nil }
        let fd = DescriptorReserve.admit(openat(shardFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard fstat(fd, &info) == 0, FileIO.isRegular(info), info.st_size >= 0, info.st_size < 1 << 40 else { return nil }
        let size = Int(info.st_size)
        let headerLength = min(size, DiskCacheEntry.headerSize)
        var header = [UInt8](repeating: 0, count: headerLength)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, headerLength, 0) }) == headerLength,
              let layout = header.withUnsafeBytes({ DiskCacheEntry.layout(header: $0, fileSize: size) }) else { return nil }
        let urlLength = layout.urlLength
        var url = [UInt8](repeating: 0, count: urlLength)
        guard url.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, urlLength, off_t(layout.urlOffset)) }) == urlLength else { return nil }
        return (String(decoding: url, as: UTF8.self), size, size - layout.bodyOffset)
    }

    /// Writes `file` as the entry for `key`: a temporary file in `tmp/` (locked with `flock` while
    /// it is written, so that no sweeper removes it), then a rename over the entry.
    func writeEntry(_ file: [UInt8], key: Hash128) throws(DiskCacheError) {
        let (shard, name) = Self.entryName(key)
        let shardFD: Int32
        switch openSubfolder(shard, create: true) {
        case .success(let fd): shardFD = fd
        case .failure(let error): throw error.cacheError
        }
        defer { close(shardFD) }
        try writeThroughTemporary(file, as: name, in: shardFD, path: entryPath(key), what: "entry", prefix: "entry-", sync: false)
    }

    /// Writes `file` to a new locked temporary `tmp/<prefix><16 hex>` (its data synced when asked),
    /// then renames it over `name` in the folder open at `folderFD` (`path` names the final file),
    /// replacing whatever is there without following it (an empty folder is removed first): no
    /// reader ever sees half a file, and a failure leaves no temporary behind. Support's
    /// `AtomicFileWriter.replace` does it; this names the cache's failures.
    func writeThroughTemporary(_ file: [UInt8], as name: String, in folderFD: Int32, path finalPath: String, what: String,
               prefix: String, sync: Bool) throws(DiskCacheError) {
        let temporaryFD: Int32
        switch openSubfolder(Self.temporaryFolderName, create: true) {
        case .success(let fd): temporaryFD = fd
        case .failure(let error): throw error.cacheError
        }
        defer { close(temporaryFD) }
        do throws(AtomicFileWriter.ReplaceFailure) {
            try AtomicFileWriter.replace(file, named: name, inFolder: folderFD, mode: fileMode, temporaryPrefix: prefix,
                                         temporaryFolder: temporaryFD, locksTemporary: true, durability: sync ? .data : .none,
                                         existing: .anythingOrAnEmptyFolder)
        } catch {
            let temporaryPath = path + "/" + Self.temporaryFolderName + "/" + (error.temporary ?? "")
            switch error.step {
            case .write, .sync:
                throw DiskCacheError(path: temporaryPath, message: "cannot write the \(what) \(finalPath): \(error.reason)")
            case .setMode:
                throw DiskCacheError(path: temporaryPath, message: "cannot set the mode: \(error.reason)")
            case .folderInPlace:
                throw DiskCacheError(path: finalPath, message: Self.foreignFolderMessage(what))
            case .rename:
                throw DiskCacheError(path: finalPath, message: "cannot rename \(temporaryPath) over the \(what): \(error.reason)")
            case .create, .inspect, .notRegular:
                throw temporaryFailure(error)
            }
        }
    }

    /// A temporary of `tmp/` that could not be made (`AtomicFileWriter.replace`'s `.create`), as
    /// the cache's error: the name tried and why, or the folder when no name could be locked.
    func temporaryFailure(_ error: AtomicFileWriter.ReplaceFailure) -> DiskCacheError {
        guard let name = error.temporary, error.errno != 0 else {
            return DiskCacheError(path: path + "/" + Self.temporaryFolderName, message: "cannot create a temporary file")
        }
        return DiskCacheError(path: path + "/" + Self.temporaryFolderName + "/" + name, message: "cannot create a temporary file: \(error.reason)")
    }

    /// Removes the entry for `key` (a missing one is not a failure).
    func removeEntry(_ key: Hash128) -> SystemError? {
        let (shard, name) = Self.entryName(key)
        let shardFD = DescriptorReserve.admit(openat(descriptor, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard shardFD >= 0 else {
            return errno == ENOENT ? nil : SystemError(path: path + "/" + shard, errno: errno, action: "cannot open the shard folder")
        }
        defer { close(shardFD) }
        return removeEntryName(name, in: shardFD, shard: shard)
    }

    /// Removes the entry name `name` in the shard open at `shardFD`, whatever it is: a file, a
    /// FIFO, a device, a symbolic link (never followed), or a folder, only when it is empty (no
    /// entry is a folder, so an empty one is the cache's debris; one holding anything is not the
    /// cache's to remove, and is named). A missing one is not a failure.
    private func removeEntryName(_ name: String, in shardFD: Int32, shard: String) -> SystemError? {
        if unlinkat(shardFD, name, 0) == 0 || errno == ENOENT { return nil }
        var code = errno
        if code == EISDIR {
            // Only an empty folder goes (rmdir); the kernel checks, so nothing inside is ever touched.
            if unlinkat(shardFD, name, AT_REMOVEDIR) == 0 || errno == ENOENT { return nil }
            code = errno
            if code == ENOTEMPTY || code == EEXIST {
                return SystemError(path: path + "/" + shard + "/" + name, errno: 0, action: "cannot remove: " + Self.foreignFolderMessage())
            }
        }
        return SystemError(path: path + "/" + shard + "/" + name, errno: code, action: "cannot remove")
    }

    /// Calls `body` with each entry name (32 hex digits, in the shard its first two name) and
    /// its `lstat`, in every real shard folder (no symbolic link followed); returns the shards
    /// that could not be opened.
    private func forEachEntry(_ body: (_ shardFD: Int32, _ shard: String, _ name: String, _ key: Hash128, _ info: stat) -> Void) -> [SystemError] {
        var problems: [SystemError] = []
        for shard in (FileIO.names(in: descriptor) ?? []) where Self.isShardName(shard) {
            let shardFD: Int32
            switch openSubfolder(shard, create: false) {
            case .success(let fd): shardFD = fd
            case .failure(let error):
                problems.append(error)
                continue
            }
            defer { close(shardFD) }
            for name in FileIO.names(in: shardFD) ?? [] {
                guard name.hasPrefix(shard), let key = Hash128(hex: name), key.description == name else { continue }
                var info = stat()
                guard fstatat(shardFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                body(shardFD, shard, name, key, info)
            }
        }
        return problems
    }

    /// Every regular entry file, with its size and modification time (an `fstatat` each: only
    /// when the journal must be rebuilt), and the shards that could not be opened.
    func scanEntries() -> (entries: [(key: Hash128, size: Int, modified: Int)], problems: [SystemError]) {
        var entries: [(key: Hash128, size: Int, modified: Int)] = []
        let problems = forEachEntry { _, _, _, key, info in
            guard FileIO.isRegular(info) else { return }
            entries.append((key, Int(info.st_size), Int(FileIO.modificationTime(info))))
        }
        return (entries, problems)
    }

    /// Removes every entry name in every real shard folder (regular or not; a folder only when
    /// it is empty, one holding anything is a failure naming it): the count removed and each failure.
    func removeAllEntries() -> (removed: Int, failures: [SystemError]) {
        var removed = 0
        var failures: [SystemError] = []
        failures += forEachEntry { shardFD, shard, name, _, _ in
            if let failure = removeEntryName(name, in: shardFD, shard: shard) { failures.append(failure) } else { removed += 1 }
        }
        return (removed, failures)
    }
}
