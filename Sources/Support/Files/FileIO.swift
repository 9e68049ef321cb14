#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading, writing and listing through open descriptors: the package's one copy of each loop
/// (`EINTR` retried, short reads and writes continued), used by the disk cache, the usage ledger,
/// the data files (`readToEnd`), the atomic file writer and the command's output.
///
/// ```swift
/// if let failure = FileIO.writeAll(fd, bytes) { throw SystemError(path: path, errno: 0, action: "write failed: \(failure)") }
/// let whole = FileIO.readAll(fd, size: Int(info.st_size))       // nil when the file is shorter
/// ```
package enum FileIO {
    /// Writes all of `bytes` to `fd`; nil, or the reason it failed (`errno`'s text, in lower case).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`: the package's one
    /// write-all loop. Nil, or the reason it failed (`errno`'s text, in lower case; a write that
    /// takes nothing is "nothing written", never a loop for ever).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written == 0 ? "nothing written" : errnoText(errno).lowercased() }
            offset += written
        }
        return nil
    }

    /// Reads exactly `size` bytes from the start of `fd`, or nil when the file is shorter.
    package static func readAll(_ fd: Int32, size: Int) -> [UInt8]? {
        readAll(fd, from: 0, size: size)
    }

    /// Reads exactly `size` bytes of `fd` from `offset`, or nil when the file ends first.
    package static func readAll(_ fd: Int32, from offset: Int, size: Int) -> [UInt8]? {
        guard size > 0 else { return [] }
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            complete = readFully(fd, into: raw, at: offset)
            if !complete { raw.initializeMemory(as: UInt8.self, repeating: 0) }
            initialized = size
        }
        return complete ? bytes : nil
    }

    /// Fills `buffer` from `fd` at `offset` (`pread`: the descriptor's position is neither used
    /// nor moved), retrying short reads and `EINTR`: the package's one positional read-all loop.
    /// False when the file ends first or a read fails (what was read is in `buffer`).
    package static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
        var done = 0
        while done < buffer.count {
            let count = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }

    /// What `readToEnd` found.
    package enum ReadToEnd: Sendable, Equatable {
        /// Every byte up to the end.
        case bytes([UInt8])
        /// A read failed with this `errno` (`EAGAIN`: a non-blocking descriptor with nothing to read now).
        case failed(Int32)
        /// More than the limit: reading stopped there.
        case tooLarge
    }

    /// Reads `fd` from its position to its end (a pipe, a procfs file or a file on disk), retrying
    /// `EINTR`: the package's one streaming read-all loop. `sizeHint` (the size `fstat` gave, 0
    /// when unknown) sizes the reads: a file on disk is read in one `read` of that size plus one
    /// that finds its end, into memory that is not zeroed first (a 64 KiB zeroed buffer per file
    /// cost a decision 16 page faults: docs/startup.md). More than `limit` bytes is `.tooLarge`.
    package static func readToEnd(_ fd: Int32, sizeHint: Int = 0, limit: Int) -> ReadToEnd {
        var bytes: [UInt8] = []
        let chunkSize = sizeHint > 0 ? min(sizeHint + 1, 1 << 16) : 1 << 16
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        if sizeHint > 0 { bytes.reserveCapacity(min(sizeHint, limit)) }
        while true {
            let count = systemRead(fd, chunk.baseAddress, chunk.count)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                return .failed(code)
            }
            if count == 0 { return .bytes(bytes) }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            if bytes.count > limit { return .tooLarge }
        }
    }

    /// Writes all of `bytes` to `fd` at `offset` (`pwrite`), retrying short writes and `EINTR`:
    /// nil, or the `errno` it failed with (`ENOSPC` for a write that takes nothing).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Int32? {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : ENOSPC }
            done += written
        }
        return nil
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
