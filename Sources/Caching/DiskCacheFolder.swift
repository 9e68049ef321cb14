import Policy
import Support
import HTTPSemantics

/// The cache's folder on disk: its layout, and every system call that touches it.
///
/// ```
/// <folder>/.imgpolicy-cache      the marker: this folder is a cache (created on first open)
/// <folder>/journal               the index and access order (DiskCacheJournal)
/// <folder>/tmp/entry-<16 hex>    temporaries being written (locked by their writer)
/// <folder>/tmp/journal-<16 hex>  a journal being rewritten
/// <folder>/tmp/partial-<16 hex>  a partial body being saved
/// <folder>/partial/ab34…e1       partial bodies of interrupted transfers (DiskCachePartialFile)
/// <folder>/ab/ab34…e1            entries: 32 hex digits of the URL's hash, in 256 shards
/// <folder>/usage/                the data usage ledger (DataUsageLedger): never read or removed here
/// ```
///
/// The folder itself is opened as given (it may be a symbolic link, as `~/.cache` often is);
/// everything inside it is reached relative to that descriptor (`openat`, `fstatat`, `unlinkat`,
/// `renameat`) without following a symbolic link (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`), and only
/// names of the layout above are ever read or removed. Files are opened `O_NONBLOCK` and checked to
/// be regular before any read, so a FIFO or a device can never block or be read.
package final class DiskCacheFolder: Sendable {
    /// The folder's path, as given (without a trailing slash).
    let path: String
    /// An open descriptor of the folder.
    let descriptor: Int32
    /// The mode of files created (0600 by default); folders get the matching search bits.
    let fileMode: mode_t

    package static let markerName = ".imgpolicy-cache"
    static let markerText = Array("imgpolicy disk cache: every entry here may be removed at any time\n".utf8)
    static let journalName = "journal"
    static let temporaryFolderName = "tmp"
    package static let usageFolderName = "usage"
    /// The usage ledger's lock file in `usage/`.
    package static let usageLockName = "lock"

    /// Whether `name` in `usage/` is one the data usage ledger (module `Accounting`, a tenant of
    /// the cache folder) makes: `YYYY-MM-DD.json` (a UTC day), `.YYYY-MM-DD.json.tmp-…` (being
    /// written), `YYYY-MM-DD.json.damaged-…` (set aside), or the lock. The cache adopts a folder
    /// whose `usage/` holds only these, and never reads or removes them.
    package static func isUsageLedgerName(_ name: String) -> Bool {
        guard name != usageLockName else { return true }
        let temporary = name.hasPrefix(".")
        let unprefixed = Array((temporary ? name.dropFirst() : Substring(name)).utf8)
        let digits: Set<Int> = [0, 1, 2, 3, 5, 6, 8, 9]
        guard unprefixed.count >= 10, unprefixed[4] == UInt8(ascii: "-"), unprefixed[7] == UInt8(ascii: "-"),
              digits.allSatisfy({ (0x30...0x39).contains(unprefixed[$0]) }) else { return false }
        let rest = String(decoding: unprefixed.dropFirst(10), as: UTF8.self)
        return temporary ? rest.hasPrefix(".json.tmp-") : rest == ".json" || rest.hasPrefix(".json.damaged-")
    }

    var folderMode: mode_t { fileMode | ((fileMode & 0o444) >> 2) | 0o700 }

    /// Opens (creating it and its parents if needed, unless `creating` is false) the cache folder
    /// at `path`; `claim()` then checks that it is a cache.
    init(path: String, fileMode: mode_t, creating: Bool = true) throws(DiskCacheError) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.fileMode = fileMode & 0o7777
        if creating { try Self.makeFolders(self.path, mode: fileMode | ((fileMode & 0o444) >> 2) | 0o700) }
        let descriptor = DescriptorReserve.admit(open(self.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard descriptor >= 0 else {
            throw DiskCacheError(path: self.path, message: "cannot open the cache folder: \(errnoText())", code: .openFailed)
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    // MARK: - Names

    /// `ab/ab34…e1`, relative to the folder.
    static func entryName(_ key: Hash128) -> (shard: String, name: String) {
        let name = key.description
        return (String(name.prefix(2)), name)
    }

    /// The path of the entry for `key`.
    func entryPath(_ key: Hash128) -> String {
        let (shard, name) = Self.entryName(key)
        return path + "/" + shard + "/" + name
    }

    static func isShardName(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy(isLowercaseHex)
    }

    /// `entry-` then 16 hex digits (ours) or 6 letters or digits (an earlier version's `mkstemp`),
    /// or `journal-` then 16 hex digits.
    static func isTemporaryName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        if name.hasPrefix("entry-") {
            let suffix = utf8.dropFirst(6)
            return (suffix.count == 16 && suffix.allSatisfy(isLowercaseHex))
                || (suffix.count == 6 && suffix.allSatisfy { isLowercaseHex($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) })
        }
        if name.hasPrefix("journal-") || name.hasPrefix("partial-") {
            let suffix = utf8.dropFirst(8)
            return suffix.count == 16 && suffix.allSatisfy(isLowercaseHex)
        }
        return false
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }


    // MARK: - Marker

    /// Checks that the folder is a cache. A folder with the marker is one. A new or empty folder
    /// gets the marker; when it cannot be written there (an immutable folder, a full disk), the
    /// failure is returned: the folder is then an empty cache this process only reads. A folder
    /// holding strong evidence of an earlier version's cache is adopted (the marker is added).
    /// Anything else is refused with `.notACache`, untouched.
    ///
    /// With `writingMarker` false (a cache only looked at), nothing is written: an empty folder
    /// returns the error of a marker not written, and an earlier version's cache is taken as it is.
    func claim(writingMarker: Bool = true) throws(DiskCacheError) -> DiskCacheError? {
        var info = stat()
        if fstatat(descriptor, Self.markerName, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            guard FileIO.isRegular(info) else {
                throw DiskCacheError(path: path + "/" + Self.markerName, message: "the cache marker is not a regular file: not a cache folder; nothing in it is read or removed", code: .notACache)
            }
            return nil
        }
        guard let names = FileIO.names(in: descriptor) else {
            throw DiskCacheError(path: path, message: "cannot read the cache folder: \(errnoText())", code: .openFailed)
        }
        let adoptable = isEmptyOrEarlierCache(names)
        // The marker may have appeared since it was looked for (another process's first open).
        if !adoptable, fstatat(descriptor, Self.markerName, &info, AT_SYMLINK_NOFOLLOW) == 0, FileIO.isRegular(info) { return nil }
        guard adoptable else {
            throw DiskCacheError(path: path, message: "not a cache folder (not empty, and no \(Self.markerName) marker): nothing in it is read or removed; choose an empty or new folder", code: .notACache)
        }
        guard writingMarker else {
            return names.isEmpty ? DiskCacheError(path: path, message: "the folder is empty and is only looked at") : nil
        }
        // Support's atomic replace relative to the folder's descriptor: never through a link.
        do throws(SystemError) {
            try AtomicFileWriter.write(Self.markerText, named: Self.markerName, inFolder: descriptor,
                                       displayPath: path + "/" + Self.markerName, newFileMode: fileMode, locksTemporary: true)
        } catch where names.allSatisfy(Self.isMarkerTemporary) {
            // Empty (or holding only another first open's temporaries): used as an empty cache
            // that is only read, and nothing is created in it (`DiskCache` refuses stores).
            return DiskCacheError(path: error.path, message: error.message)
        } catch {
            throw DiskCacheError(path: error.path, message: error.message)
        }
        return nil
    }

    /// Whether a folder without the marker may be taken as a cache: it is empty, or it holds
    /// strong evidence of an earlier version's cache and nothing else. Every name is a shard, `tmp`,
    /// `journal` or `usage` (the ledger's own names only); the journal starts with the journal's
    /// magic; every name in a shard is an entry name of that shard and every name in `tmp/` a
    /// temporary's; and at least one entry exists (a ledger alone is no evidence).
    /// Another process's first open may be writing the marker meanwhile (its temporaries are
    /// ignored), and a name gone since the listing proves nothing either way.
    private func isEmptyOrEarlierCache(_ names: [String]) -> Bool {
        var entries = 0
        for name in names {
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }
                return false
            }
            if Self.isMarkerTemporary(name) {
                guard FileIO.isRegular(info) else { return false }
            } else if name == Self.usageFolderName {
                guard FileIO.isFolder(info), let inside = namesInSubfolder(name), inside.allSatisfy(Self.isUsageLedgerName) else { return false }
            } else if name == Self.journalName {
                guard FileIO.isRegular(info), startsWithJournalMagic() else { return false }
            } else if name == Self.temporaryFolderName {
                guard FileIO.isFolder(info), let inside = namesInSubfolder(name) else { return false }
                guard inside.allSatisfy(Self.isTemporaryName) else { return false }
            } else if Self.isShardName(name) {
                guard FileIO.isFolder(info), let inside = namesInSubfolder(name) else { return false }
                guard inside.allSatisfy({ $0.hasPrefix(name) && Hash128(hex: $0)?.description == $0 }) else { return false }
                entries += inside.count
            } else {
                return false
            }
        }
        // A usage ledger is neutral beside an earlier cache's entries, never evidence on its own:
        // the ledger is written only beside the marker, so a `usage/` without it is someone
        // else's (or a cache whose marker was removed on purpose), and the folder is refused.
        let onlyMarkerTemporaries = names.allSatisfy(Self.isMarkerTemporary)
        return onlyMarkerTemporaries || entries > 0
    }

    /// Whether `name` is a temporary of the marker, which another process's first open may be
    /// writing: `AtomicFileWriter`'s shape (`..imgpolicy-cache.tmp-` and 16 hex digits), or an
    /// earlier version's (`.imgpolicy-cache.new-…`).
    static func isMarkerTemporary(_ name: String) -> Bool {
        isMarkerWriterTemporary(name) || name.hasPrefix(markerName + ".new-")
    }

    /// Whether `name` is a temporary of the marker as this version writes it
    /// (`..imgpolicy-cache.tmp-…`, locked by its writer until it is renamed).
    static func isMarkerWriterTemporary(_ name: String) -> Bool {
        name.hasPrefix(AtomicFileWriter.temporaryPrefix(for: markerName))
    }

    /// The names in the subfolder `name` (never through a symbolic link), or nil.
    private func namesInSubfolder(_ name: String) -> [String]? {
        guard case .success(let fd) = openSubfolder(name, create: false) else { return nil }
        defer { close(fd) }
        return FileIO.names(in: fd)
    }

    /// Whether the file `journal` starts with the journal's own magic (never blocks: opened
    /// non-blocking, checked regular).
    private func startsWithJournalMagic() -> Bool {
        let fd = DescriptorReserve.admit(openat(descriptor, Self.journalName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, FileIO.isRegular(info) else { return false }
        let magic = DiskCacheJournal.magic
        var bytes = [UInt8](repeating: 0, count: magic.count)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, magic.count, 0) }
        return count == magic.count && bytes == magic
    }

    // MARK: - Subfolders

    /// Opens the subfolder `name` (a shard or `tmp`), creating it when asked; never through a
    /// symbolic link. Returns the descriptor, or the errno.
    func openSubfolder(_ name: String, create: Bool) -> Result<Int32, SystemError> {
        if create && mkdirat(descriptor, name, folderMode) != 0 && errno != EEXIST {
            return .failure(SystemError(path: path + "/" + name, errno: errno, action: "cannot create the folder"))
        }
        let fd = DescriptorReserve.admit(openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            let reason = code == ELOOP ? "is a symbolic link, not a folder (not followed)" : code == ENOTDIR ? "is not a folder" : "cannot open the folder"
            return .failure(SystemError(path: path + "/" + name, errno: code, action: reason))
        }
        return .success(fd)
    }

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

    // MARK: - Temporaries

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

    // MARK: - Files






    private static func makeFolders(_ path: String, mode: mode_t) throws(DiskCacheError) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        if errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeFolders(String(path[..<slash]), mode: mode)
            if mkdir(path, mode) == 0 || errno == EEXIST { return }
        }
        throw DiskCacheError(path: path, message: "cannot create the folder: \(errnoText())", code: .openFailed)
    }
}

extension SystemError {
    /// This failure as the disk cache's error.
    var cacheError: DiskCacheError { DiskCacheError(path: path, message: message) }
}

/// The C library's message for the current `errno`, in lower case (it ends a message).
func errnoText() -> String { Support.errnoText(errno).lowercased() }
