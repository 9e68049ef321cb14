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
///
/// Its files, by role: this one opens the folder and names its files; `DiskCacheFolder+Marker.swift`
/// claims the folder; `+Entries` reads, writes and removes entries; `+Freshness` rewrites an
/// entry's freshness slot; `+Partials` keeps partial bodies; `+Sweep` removes stale temporaries;
/// `+RegularFiles` opens a file of the layout.
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

    // MARK: - Files

    /// Creates the folder at `path` and its missing parents, each with `mode`.
    private static func makeFolders(_ path: String, mode: mode_t) throws(DiskCacheError) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        if errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeFolders(String(path[..<slash]), mode: mode)
            if mkdir(path, mode) == 0 || errno == EEXIST { return }
        }
        throw DiskCacheError(path: path, message: "cannot create the folder: \(errnoText())", code: .openFailed)
    }
}
