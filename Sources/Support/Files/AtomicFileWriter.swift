#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file's content atomically: the bytes go to a temporary file in the same folder,
/// which is flushed to disk and renamed over the target. A reader sees the old file or the new
/// one, never half of either; a failure leaves the old file untouched and no temporary behind.
///
/// Only regular files are ever replaced:
/// - a directory, FIFO, device or socket at the path is refused (a `SystemError` naming its type):
///   a rename would swap `/dev/null` for a regular file;
/// - a symbolic link is followed by `write(_:to:)` (for files a user names: the file it points to
///   is replaced and the link is kept; a link to nothing is refused), never by
///   `write(_:named:inFolder:displayPath:newFileMode:)` (for files the package owns);
/// - a file that is replaced keeps its permission bits; a new one gets `newFileMode`;
/// - a target whose real path is not UTF-8 (`PathBytes`) is refused: its name cannot be written.
package enum AtomicFileWriter {
    /// Writes `bytes` to `path`.
    ///
    /// - Parameters:
    ///   - newFileMode: the permissions of a file that did not exist.
    ///   - createFolders: create missing parent folders (mode 0700); otherwise a missing folder is an error.
    package static func write(_ bytes: [UInt8], to path: String, newFileMode: mode_t = 0o644,
                              createFolders: Bool = true) throws(SystemError) {
        // Array's accessor rethrows untyped errors: the typed one is carried out by hand.
        let outcome: Result<Void, SystemError> = bytes.withUnsafeBytes { raw in
            do throws(SystemError) {
                return .success(try write(raw, to: path, newFileMode: newFileMode, createFolders: createFolders))
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// Writes the bytes of `bytes` (memory the caller holds for the duration of the call) to `path`, as above.
    package static func write(_ bytes: UnsafeRawBufferPointer, to path: String, newFileMode: mode_t = 0o644,
                              createFolders: Bool = true) throws(SystemError) {
        let target = try regularTarget(of: path)
        let folder = parentFolder(of: target.path)
        if createFolders { try makeFolders(folder, for: path) }
        let name = target.path.split(separator: "/").last.map(String.init) ?? "file"
        // The folder is reached as the user's path says (its links followed, as `regularTarget`
        // followed the file's); the rest is `replace`, relative to it.
        var folderFD = DescriptorReserve.admit(open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        #if os(Linux)
        // A folder that may be written and searched but not listed is still written (its own
        // `fsync` is then skipped, as it was when it could not be opened).
        // (`O_PATH`, which Swift's Glibc does not export: its value on every architecture Swift runs on.)
        let pathOnly: Int32 = 0o10_000_000
        if folderFD < 0 && errno == EACCES { folderFD = DescriptorReserve.admit(open(folder, pathOnly | O_DIRECTORY | O_CLOEXEC)) }
        #endif
        guard folderFD >= 0 else { throw failure(path, "cannot create a temporary file: \(errnoText(errno).lowercased())") }
        defer { close(folderFD) }
        do throws(ReplaceFailure) {
            try replace(bytes, named: name, inFolder: folderFD, mode: target.mode ?? newFileMode,
                        temporaryPrefix: temporaryPrefix(for: name), durability: .full, existing: .regularFile)
        } catch {
            throw failure(path, error, refusal: "not a regular file; refusing to replace it")
        }
    }

    /// Writes `bytes` as the file `name` of the folder open as `folderFD`, never following a
    /// symbolic link: every step is relative to the descriptor (`openat` with `O_EXCL` and
    /// `O_NOFOLLOW`, `renameat`), so a link planted in place of the folder or the file is never
    /// written through. The file at `name`, when there is one, must be regular (a symbolic link
    /// there is refused, not replaced); it keeps its permission bits, a new one gets `newFileMode`.
    /// The temporary is `.NAME.tmp-` and 16 hexadecimal digits (`temporaryPrefix(for:)`).
    ///
    /// The one link rule of the package: files a user names (settings, `--output`) are written with
    /// `write(_:to:)`, which follows a link to the file the user meant; files the package owns (the
    /// usage ledger) with this, which never does.
    ///
    /// - Parameters:
    ///   - displayPath: the path the errors name.
    ///   - locksTemporary: hold `flock(LOCK_EX)` on the temporary until it is renamed (the cache's
    ///     marker: the cache removes only the marker temporaries it can lock, a killed writer's).
    package static func write(_ bytes: [UInt8], named name: String, inFolder folderFD: Int32, displayPath: String,
                              newFileMode: mode_t = 0o600, locksTemporary: Bool = false) throws(SystemError) {
        do throws(ReplaceFailure) {
            try replace(bytes, named: name, inFolder: folderFD, mode: newFileMode, temporaryPrefix: temporaryPrefix(for: name),
                        locksTemporary: locksTemporary, durability: .full, existing: .regularFile)
        } catch {
            throw failure(displayPath, error, refusal: "not a regular file; refusing to replace it (links are never followed here)")
        }
    }

    /// The longest name most file systems take (ext4, XFS, Btrfs, tmpfs: 255 bytes).
    package static let longestName = 255

    /// Checks, without writing anything, what can be checked before `path` is written: a target
    /// that is not a regular file (as `write` refuses it), a path or a name too long for the file
    /// system, a folder that does not exist or cannot be written. (`imgpolicy --fetch --output`
    /// asks before any download, so that no data is spent on an image that cannot be written;
    /// what changes meanwhile is found by `write`.)
    /// - Throws: `.writeFailed` naming `path` and what is wrong.
    package static func checkWritable(_ path: String) throws(SystemError) {
        let longestPath = Int(PATH_MAX) - 1
        guard path.utf8.count <= longestPath else {
            throw failure(path, "the path is \(path.utf8.count) bytes long, longer than the \(longestPath) bytes a path may have")
        }
        /// The name of `file` fits its folder's file system (which must exist).
        func checkName(of file: String) throws(SystemError) -> String {
            let folder = parentFolder(of: file)
            let name = file.split(separator: "/").last.map(String.init) ?? ""
            var info = stat()
            guard stat(folder, &info) == 0, FileKind(mode: info.st_mode) == .directory else {
                throw failure(path, "the folder \(folder) does not exist")
            }
            let nameLimit = pathconf(folder, Int32(_PC_NAME_MAX))
            let longest = nameLimit > 0 ? nameLimit : longestName
            guard name.utf8.count <= longest else {
                throw failure(path, "the name is \(name.utf8.count) bytes long, longer than the \(longest) bytes the file system allows")
            }
            return folder
        }
        _ = try checkName(of: path)
        let target = try regularTarget(of: path)
        let folder = try checkName(of: target.path)
        // Writing means creating a temporary file there and renaming it (`access` also sees a
        // read-only mount and an immutable folder, even for root).
        guard access(folder, W_OK | X_OK) == 0 else {
            throw failure(path, "the folder \(folder) cannot be written (\(errnoText(errno).lowercased()))")
        }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`.
    package static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(SystemError) {
        let outcome: Result<Void, SystemError> = bytes.withUnsafeBytes { raw in
            do throws(SystemError) { return .success(try writeAll(raw, to: fd, path: path)) } catch { return .failure(error) }
        }
        try outcome.get()
    }

    /// Writes all of `bytes` to `fd`, as above (`FileIO.writeAll`, the one write-all loop).
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(SystemError) {
        if let reason = FileIO.writeAll(fd, bytes) { throw failure(path, "write failed: \(reason)") }
    }

    /// The file to replace for `path` (the target of a symbolic link) and its permission bits, nil
    /// when it does not exist yet; refuses anything that is not a regular file.
    private static func regularTarget(of path: String) throws(SystemError) -> (path: String, mode: mode_t?) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return (path, nil) }
            throw failure(path, errnoText(code).lowercased())
        }
        var resolved = path
        if FileKind(mode: info.st_mode) == .symbolicLink {
            guard stat(path, &info) == 0 else {
                throw failure(path, "is a symbolic link to a missing file (\(errnoText(errno).lowercased())); refusing to replace the link")
            }
            guard let real = realpath(path, nil) else { throw failure(path, "cannot resolve the symbolic link: \(errnoText(errno).lowercased())") }
            defer { free(real) }
            // A real path that is not UTF-8 cannot be named by a String: decoding it would name
            // another file (each bad byte becomes U+FFFD), which the rename would then create.
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(real).assumingMemoryBound(to: UInt8.self), count: strlen(real))
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw failure(path, "its real path \(PathBytes.displayed(bytes)) is not UTF-8; only a file whose path is UTF-8 is replaced (rename it)")
            }
            resolved = text
        }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular else {
            throw failure(path, "is \(kind?.article ?? "a special file"), not a regular file; refusing to replace it")
        }
        return (resolved, info.st_mode & 0o777)
    }

    package static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates `folder` and its missing parents.
    package static func makeFolders(_ folder: String, for path: String) throws(SystemError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = parentFolder(of: folder)
        if parent != folder { try makeFolders(parent, for: path) }
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw failure(path, "cannot create the folder \(folder): \(errnoText(errno).lowercased())")
        }
    }

    private static func failure(_ path: String, _ message: String) -> SystemError {
        SystemError(path: path, errno: 0, action: message)
    }

    /// A failed `replace` of `path` as the messages of `write` (`refusal`: what follows the kind
    /// of a file that is not regular).
    private static func failure(_ path: String, _ error: ReplaceFailure, refusal: String) -> SystemError {
        switch error.step {
        case .inspect: failure(path, error.reason)
        case .notRegular(let kind): failure(path, "is \(kind?.article ?? "a special file"), \(refusal)")
        case .create: failure(path, error.errno == 0 ? "cannot create a temporary file" : "cannot create a temporary file: \(error.reason)")
        case .write: failure(path, "write failed: \(error.reason)")
        case .setMode: failure(path, "cannot set the mode: \(error.reason)")
        case .sync: failure(path, "fsync failed: \(error.reason)")
        case .folderInPlace, .rename: failure(path, "rename failed: \(error.reason)")
        }
    }
}
