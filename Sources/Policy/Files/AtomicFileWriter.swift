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
enum AtomicFileWriter {
    /// Writes `bytes` to `path`, creating missing parent folders (mode 0700).
    static func write(_ bytes: [UInt8], to path: String) throws(DataFileError) {
        let folder = parentFolder(of: path)
        try makeFolders(folder, for: path)
        let template = folder + "/." + (path.split(separator: "/").last.map(String.init) ?? "file") + ".tmp-XXXXXX"
        var templateBytes = Array(template.utf8CString)
        let fd = templateBytes.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure(path, "cannot create a temporary file: \(errnoText(errno).lowercased())") }
        let temporary = String(decoding: templateBytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var finished = false
        defer {
            if !finished { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw failure(path, "write failed: \(errnoText(errno).lowercased())")
                }
                offset += written
            }
            fchmod(fd, 0o644)
            guard fsync(fd) == 0 else { throw failure(path, "fsync failed: \(errnoText(errno).lowercased())") }
        }
        guard rename(temporary, path) == 0 else { throw failure(path, "rename failed: \(errnoText(errno).lowercased())") }
        finished = true
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            _ = fsync(folderFD)
            close(folderFD)
        }
    }

    static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates `folder` and its missing parents.
    static func makeFolders(_ folder: String, for path: String) throws(DataFileError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = parentFolder(of: folder)
        if parent != folder { try makeFolders(parent, for: path) }
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw failure(path, "cannot create the folder \(folder): \(errnoText(errno).lowercased())")
        }
    }

    private static func failure(_ path: String, _ message: String) -> DataFileError {
        DataFileError(.writeFailed, source: path, message: message)
    }
}
