import Support

/// Reads a whole data file (items, policy, settings) with errors that name the file and say
/// what is wrong, and a size limit so that a huge file cannot exhaust memory.
///
/// Only regular files are read. The file is opened with `O_NONBLOCK` (opening a FIFO that has no
/// writer would otherwise wait forever) and its type is checked with `fstat` on the open
/// descriptor before any byte is read: a FIFO, directory, device or socket is refused with an
/// `.unreadable` error naming the file and its type; the flag stays set, so a file that claims to
/// be regular but waits for data (`/proc/kmsg`) is refused instead of blocking. Standard input (`-`) is read as it is, so
/// that a pipe still works there.
package enum DataFileReader {
    /// The largest data file read: far above any real item, policy or settings file.
    static let maximumSize = 64 << 20

    /// The bytes of `path`; `-` reads standard input.
    package static func read(_ path: String) throws(DataFileError) -> [UInt8] {
        if path == "-" { return try readAll(fd: 0, source: "<stdin>") }
        let fd = DescriptorReserve.admit(open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            // A socket cannot be opened at all (ENXIO): say what it is rather than the errno text.
            if let kind = FileKind(path: path, followingLinks: true), kind != .regular {
                throw DataFileError(.unreadable, source: path, message: "is \(kind.article), not a regular file")
            }
            // A symbolic link that leads nowhere says so, rather than "no such file" beside a name that exists.
            if code == ELOOP {
                throw DataFileError(.unreadable, source: path, message: "is a symbolic link loop (too many levels of symbolic links)")
            }
            if code == ENOENT, FileKind(path: path, followingLinks: false) == .symbolicLink {
                let target = linkTarget(path).map { " (\($0))" } ?? ""
                throw DataFileError(.notFound, source: path, message: "is a symbolic link to a missing file\(target)")
            }
            throw DataFileError(code == ENOENT || code == ENOTDIR ? .notFound : .unreadable, source: path,
                                message: code == ENOENT ? "no such file" : errnoText(code).lowercased(), systemErrno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let number = errno
            throw DataFileError(.unreadable, source: path, message: errnoText(number).lowercased(), systemErrno: number)
        }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular else {
            throw DataFileError(.unreadable, source: path, message: "is \(kind?.article ?? "a special file"), not a regular file")
        }
        // The size on disk says it at once (a procfs file says 0 and is read to its end).
        if info.st_size > maximumSize {
            throw DataFileError(.invalid, source: path, message: "larger than \(maximumSize >> 20) MiB, refusing to read it")
        }
        // O_NONBLOCK stays set: it changes nothing for a file on disk, and a procfs file that is
        // "regular" but blocks until the kernel has something to say (/proc/kmsg) fails at once.
        return try readAll(fd: fd, source: path, expectedSize: Int(info.st_size))
    }

    /// What the symbolic link at `path` holds, if it can be read.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return PathBytes.displayed(buffer.prefix(count).map { UInt8(bitPattern: $0) })
    }

    /// Reads `fd` to its end (`FileIO.readToEnd`, the package's one loop). `expectedSize` (the
    /// size `fstat` gave, 0 when unknown) sizes the reads.
    static func readAll(fd: Int32, source: String, expectedSize: Int = 0) throws(DataFileError) -> [UInt8] {
        switch FileIO.readToEnd(fd, sizeHint: expectedSize, limit: maximumSize) {
        case .bytes(let bytes):
            return bytes
        case .failed(let code) where code == EAGAIN || code == EWOULDBLOCK:
            throw DataFileError(.unreadable, source: source, message: "has nothing to read now (a kernel or device file that waits for data), not a data file")
        case .failed(let code):
            throw DataFileError(.unreadable, source: source, message: errnoText(code).lowercased(), systemErrno: code)
        case .tooLarge:
            throw DataFileError(.invalid, source: source, message: "larger than \(maximumSize >> 20) MiB, refusing to read it")
        }
    }
}
