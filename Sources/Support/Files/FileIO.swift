#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading, writing and listing through open descriptors: the package's one copy of each loop
/// (`EINTR` retried, short reads and writes continued), used by the disk cache, the usage ledger,
/// the atomic file writer and the command's output.
///
/// ```swift
/// if let failure = FileIO.writeAll(fd, bytes) { throw SystemError(path: path, errno: 0, action: "write failed: \(failure)") }
/// let whole = FileIO.readAll(fd, size: Int(info.st_size))       // nil when the file is shorter
/// ```
package enum FileIO {
    /// Writes all of `bytes` to `fd`; nil, or the reason it failed (`errno`'s text, in lower case).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written == 0 ? "nothing written" : errnoText(errno).lowercased() }
            offset += written
        }
        return nil
    }

    /// Reads exactly `size` bytes from the start of `fd`, or nil when the file is shorter.
    package static func readAll(_ fd: Int32, size: Int) -> [UInt8]? {
        guard size > 0 else { return [] }
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size {
                let count = pread(fd, buffer.baseAddress! + offset, size - offset, off_t(offset))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                offset += count
            }
            complete = offset == size
            if !complete { (buffer.baseAddress! + offset).initialize(repeating: 0, count: size - offset) }
            initialized = size
        }
        return complete ? bytes : nil
    }

    /// The names in the folder open at `fd` (without `.` and `..`), or nil when it cannot be read.
    package static func names(in fd: Int32) -> [String]? {
        let copy = DescriptorReserve.admit(dup(fd))
        guard copy >= 0 else { return nil }
        guard let directory = fdopendir(copy) else {
            close(copy)
            return nil
        }
        defer { closedir(directory) }
        rewinddir(directory)
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// 16 random hexadecimal digits, for the names of temporary and set-aside files.
    package static func randomSuffix() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `info` is a regular file's.
    package static func isRegular(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFREG }

    /// Whether `info` is a folder's.
    package static func isFolder(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFDIR }

    /// What `info` is, with its article, for a message (`a FIFO`, `a directory`).
    package static func kind(_ info: stat) -> String { FileKind(mode: info.st_mode)?.article ?? "not a regular file" }

    /// The modification time in `info`, in seconds since 1970.
    package static func modificationTime(_ info: stat) -> Int64 {
        #if canImport(Darwin)
        Int64(info.st_mtimespec.tv_sec)
        #else
        Int64(info.st_mtim.tv_sec)
        #endif
    }
}
