import Policy
import Support

/// Small reads of sysfs and procfs: attribute files, links, existence. Failures are nil: a
/// missing or unreadable attribute is a fact the classification copes with.
enum SystemFiles {
    /// The largest file read: `/proc/net/ipv6_route` with thousands of routes still fits.
    static let maximumSize = 4 << 20

    /// The text of the regular file `path`, surrounding white space removed; nil when it cannot
    /// be read, is not a regular file, or would block.
    static func text(_ path: String) -> String? {
        // O_NONBLOCK: a FIFO planted in a fake tree (`network --root`) opens at once and is then
        // refused below, and a file that waits for data fails instead of blocking.
        let fd = DescriptorReserve.admit(open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC))
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, FileKind(mode: info.st_mode) == .regular else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maximumSize { return nil }
        }
        return trimmed(String(decoding: bytes, as: UTF8.self))
    }

    /// Where the symbolic link `path` points; nil when it is not a link.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether something (a file, a folder, a link) is at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The names in the folder `path`, without `.` and `..`; empty when it cannot be read.
    static func names(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func trimmed(_ text: String) -> String {
        var slice = Substring(text)
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}

