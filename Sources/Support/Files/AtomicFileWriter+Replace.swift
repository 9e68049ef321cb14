#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one atomic replace, relative to a folder's descriptor: every file the package
/// replaces whole (a user's settings and `--output`, the usage ledger's days, the cache's marker,
/// entries, partial bodies and journal) goes through `replace(_:named:inFolder:…)`, so its rules
/// (links, modes, syncs, temporaries) are written once.
///
/// ```swift
/// try AtomicFileWriter.replace(bytes, named: "journal", inFolder: cacheFD, mode: 0o600,
///                              temporaryPrefix: "journal-", temporaryFolder: tmpFD, locksTemporary: true,
///                              durability: .none, existing: .anything)
/// ```
extension AtomicFileWriter {
    /// What may be in the place of the file being replaced. A symbolic link is never followed.
    package enum Existing: Sendable, Equatable {
        /// Nothing, or a regular file, which keeps its permission bits (a new file gets the
        /// mode asked for). Anything else, a symbolic link included, is refused (`.notRegular`).
        case regularFile
        /// Whatever is there (a symbolic link is replaced, not followed); the new file gets the
        /// mode asked for. A folder in the place makes the rename fail.
        case anything
        /// As `anything`, and an empty folder in the place is debris: it is removed (`rmdir`) and
        /// the rename tried again. A folder holding anything is refused (`.folderInPlace`).
        case anythingOrAnEmptyFolder
    }

    /// What is flushed to disk.
    package enum Durability: Sendable, Equatable {
        /// Nothing: the rename is atomic for readers, and a crash may lose the new content.
        case none
        /// The temporary's data (`fdatasync`) before the rename.
        case data
        /// The temporary (`fsync`) before the rename, and the folder after it.
        case full
    }

    /// Why a replacement failed: the step, the `errno` (0 when `reason` says it all) and the
    /// temporary's name when one was made. The old file is untouched and no temporary is left.
    package struct ReplaceFailure: Error, Sendable, Equatable {
        /// The step that failed.
        package enum Step: Sendable, Equatable {
            /// Looking at what is in the target's place (`fstatat`).
            case inspect
            /// Something other than a regular file is there (`Existing.regularFile`): its kind,
            /// nil for one `FileKind` does not name.
            case notRegular(FileKind?)
            /// Creating the temporary (`errno` 0: no temporary could be made and locked in 8 tries).
            case create
            /// Writing the bytes.
            case write
            /// Setting the temporary's permission bits.
            case setMode
            /// Flushing the temporary to disk.
            case sync
            /// A folder holding something is in the target's place (`Existing.anythingOrAnEmptyFolder`).
            case folderInPlace
            /// Renaming the temporary over the target.
            case rename
        }

        /// The step that failed.
        package var step: Step
        /// The `errno` it failed with; 0 when `reason` says it all.
        package var errno: Int32
        /// What went wrong, in lower case (`errno`'s text, or the write loop's reason).
        package var reason: String
        /// The temporary's name in its folder, when one was made (or tried, for `.create`).
        package var temporary: String?
    }

    /// Replaces the file `name` of the folder open as `folderFD` by `bytes`, atomically: they are
    /// written to a new temporary `<temporaryPrefix><16 hex digits>` (in `temporaryFolder`, the
    /// target's folder when nil: both on one file system), flushed as `durability` says, given
    /// `mode`, and renamed over `name`. A reader sees the old file or the new one, never half of
    /// either; a failure (a full disk included) leaves the old file and no temporary.
    ///
    /// Every step is relative to the descriptors (`openat` with `O_EXCL | O_NOFOLLOW`, `fstatat`
    /// with `AT_SYMLINK_NOFOLLOW`, `renameat`): no symbolic link is ever followed, whatever
    /// `existing` allows in the target's place.
    ///
    /// - Parameters:
    ///   - mode: the permission bits of the new file (`Existing.regularFile` keeps a replaced file's).
    ///   - locksTemporary: hold `flock(LOCK_EX)` on the temporary from its creation until after
    ///     the rename, so that a sweeper that removes only the temporaries it can lock
    ///     (a killed writer's) never removes a live one.
    package static func replace(_ bytes: [UInt8], named name: String, inFolder folderFD: Int32, mode: mode_t,
                                temporaryPrefix: String, temporaryFolder: Int32? = nil, locksTemporary: Bool = false,
                                durability: Durability, existing: Existing) throws(ReplaceFailure) {
        let outcome: Result<Void, ReplaceFailure> = bytes.withUnsafeBytes { raw in
            do throws(ReplaceFailure) {
                return .success(try replace(raw, named: name, inFolder: folderFD, mode: mode, temporaryPrefix: temporaryPrefix,
                                            temporaryFolder: temporaryFolder, locksTemporary: locksTemporary,
                                            durability: durability, existing: existing))
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// Replaces the file `name` by the bytes of `bytes` (memory the caller holds for the duration
    /// of the call), as above.
    package static func replace(_ bytes: UnsafeRawBufferPointer, named name: String, inFolder folderFD: Int32, mode: mode_t,
                                temporaryPrefix: String, temporaryFolder: Int32? = nil, locksTemporary: Bool = false,
                                durability: Durability, existing: Existing) throws(ReplaceFailure) {
        var fileMode = mode
        if existing == .regularFile {
            var info = stat()
            if fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                let kind = FileKind(mode: info.st_mode)
                guard kind == .regular else { throw ReplaceFailure(step: .notRegular(kind), errno: 0, reason: "", temporary: nil) }
                fileMode = info.st_mode & 0o777
            } else if errno != ENOENT {
                throw failure(.inspect, errno, nil)
            }
        }
        let temporaryFD = temporaryFolder ?? folderFD
        let (fd, temporary) = try createTemporary(in: temporaryFD, prefix: temporaryPrefix, mode: fileMode, locked: locksTemporary)
        defer { close(fd) }  // also releases the lock, after the rename
        var finished = false
        defer {
            if !finished { unlinkat(temporaryFD, temporary, 0) }
        }
        if let reason = FileIO.writeAll(fd, bytes) {
            throw ReplaceFailure(step: .write, errno: 0, reason: reason, temporary: temporary)
        }
        guard fchmod(fd, fileMode) == 0 else { throw failure(.setMode, errno, temporary) }
        switch durability {
        case .none: break
        case .data: guard fdatasync(fd) == 0 else { throw failure(.sync, errno, temporary) }
        case .full: guard fsync(fd) == 0 else { throw failure(.sync, errno, temporary) }
        }
        var renamed = renameat(temporaryFD, temporary, folderFD, name) == 0
        if !renamed, existing == .anythingOrAnEmptyFolder, errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST {
            // Only an empty folder goes (the kernel checks): nothing inside is ever touched.
            if unlinkat(folderFD, name, AT_REMOVEDIR) == 0 {
                renamed = renameat(temporaryFD, temporary, folderFD, name) == 0
            } else if errno == ENOTEMPTY || errno == EEXIST {
                throw failure(.folderInPlace, errno, temporary)
            }
        }
        guard renamed else { throw failure(.rename, errno, temporary) }
        finished = true
        if durability == .full { _ = fsync(folderFD) }
    }

    /// The prefix of the temporaries `replace` makes for a file named `name` with a user's or the
    /// ledger's rule: `.NAME.tmp-`, its `NAME` part cut (at a character) so that with its 16 hex
    /// digits the whole is never longer than `longestName` when `name` is not (a name the file
    /// system takes is always written).
    package static func temporaryPrefix(for name: String) -> String {
        var base = Substring(name)
        while base.utf8.count + 22 > longestName, !base.isEmpty { base = base.dropLast() }
        return "." + base + ".tmp-"
    }

    /// Creates a new temporary `<prefix><16 hex>` in the folder open at `folderFD` (locked when
    /// asked: one a sweeper in another process removed between its creation and the lock is
    /// given up, and another made).
    private static func createTemporary(in folderFD: Int32, prefix: String, mode: mode_t,
                                        locked: Bool) throws(ReplaceFailure) -> (fd: Int32, name: String) {
        for _ in 0..<8 {
            let name = prefix + FileIO.randomSuffix()
            let fd = DescriptorReserve.admit(openat(folderFD, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode))
            if fd < 0 && errno == EEXIST { continue }
            guard fd >= 0 else { throw failure(.create, errno, name) }
            guard locked else { return (fd, name) }
            var info = stat()
            guard flock(fd, LOCK_EX) == 0, fstat(fd, &info) == 0, info.st_nlink > 0 else {
                close(fd)
                continue
            }
            return (fd, name)
        }
        throw ReplaceFailure(step: .create, errno: 0, reason: "", temporary: nil)
    }

    private static func failure(_ step: ReplaceFailure.Step, _ code: Int32, _ temporary: String?) -> ReplaceFailure {
        ReplaceFailure(step: step, errno: code, reason: errnoText(code).lowercased(), temporary: temporary)
    }
}
