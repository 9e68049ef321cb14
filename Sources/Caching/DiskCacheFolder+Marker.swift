import Policy
import Support
import HTTPSemantics

/// The marker `.imgpolicy-cache`: what makes a folder a cache. Claiming a folder (a new or empty
/// one gets the marker, an earlier version's cache is adopted, anything else is refused), and
/// the names of the marker's temporaries.
extension DiskCacheFolder {
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
}
