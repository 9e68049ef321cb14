import Policy
import Locking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Images on disk, in a folder that several processes may share at once.
///
/// - File names are a 128-bit hash of the URL (never its last path component, which collides and
///   can escape the folder), spread over 256 subfolders: `ab/ab34…e1`.
/// - Each entry holds a header (magic, body length, body checksum, the URL) and the body. A read
///   checks all of it; a truncated or corrupted file, or one for another URL, is removed and
///   counts as a miss.
/// - Writes go to a temporary file in the folder, then `rename` over the entry: no reader ever
///   sees half a file. (No `fsync`: after a crash an entry may be damaged, and the check above
///   catches it; the cache is not the only copy of anything.)
/// - An in-memory index of what the folder holds answers "is it cached?" with no system call.
///   It is built when the cache opens (one scan of the folder) and kept up to date by this
///   process; entries written by other processes are found on the next read of them.
/// - Past `capacity` bytes, the least recently used entries are removed (down to 90 %).
///
/// Thread safety: every method may be called from any thread at once.
public final class DiskCache: CacheInspecting {
    /// The folder.
    public let folder: String
    /// The most bytes kept (bodies plus headers).
    public let capacity: Int

    private struct Entry {
        var size: Int
        var lastUse: UInt64
    }

    private struct Index {
        var entries: [Hash128: Entry] = [:]
        var totalBytes = 0
        var clock: UInt64 = 0
    }

    // Guards the index.
    private let index = Locked(Index())

    private static let magic: [UInt8] = Array("IMGPC001".utf8)
    private static let headerSize = 8 + 8 + 16 + 4

    /// `$XDG_CACHE_HOME/imgpolicy`, else `~/.cache/imgpolicy`.
    public static func defaultFolder(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/imgpolicy" }
        return (environment["HOME"] ?? ".") + "/.cache/imgpolicy"
    }

    /// Opens (creating it if needed) the cache in `folder`, and indexes what it holds.
    /// - Throws: `.localIO` when the folder cannot be created or read.
    public init(folder: String, capacity: Int = 512 << 20) throws(DiskCacheError) {
        self.folder = folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        self.capacity = capacity
        try makeFolder(self.folder)
        try makeFolder(self.folder + "/tmp")
        rebuildIndex()
    }

    // MARK: - Queries

    /// Whether an entry for `url` is in the index: no system call.
    public func containsImage(at url: ImageURL) -> Bool {
        let key = Hash128(of: url.absoluteString)
        return index.withLock { $0.entries[key] != nil }
    }

    /// Entries and bytes in the index.
    public var statistics: (count: Int, bytes: Int) {
        index.withLock { ($0.entries.count, $0.totalBytes) }
    }

    // MARK: - Reading

    /// The image stored for `url`, or nil when there is none or it is damaged (then it is
    /// removed). Also finds entries written by other processes since the index was built.
    public func image(for url: ImageURL) -> [UInt8]? {
        let key = Hash128(of: url.absoluteString)
        let path = self.path(for: key)
        guard let file = readFile(path) else {
            forget(key)
            return nil
        }
        guard let body = Self.body(of: file, for: url) else {
            unlink(path)
            forget(key)
            return nil
        }
        index.withLock { index in
            index.clock += 1
            if index.entries[key] != nil {
                index.entries[key]!.lastUse = index.clock
            } else {
                index.entries[key] = Entry(size: file.count, lastUse: index.clock)
                index.totalBytes += file.count
            }
        }
        return body
    }

    /// The body in `file` if it is a complete, intact entry for `url`.
    static func body(of file: [UInt8], for url: ImageURL) -> [UInt8]? {
        guard file.count >= headerSize, Array(file[0..<8]) == magic else { return nil }
        return file.withUnsafeBytes { raw -> [UInt8]? in
            let bodyLength = Int(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
            let checksum = Hash128(high: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
                                   low: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
            let urlLength = Int(raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian)
            guard bodyLength > 0, urlLength < 1 << 16, file.count == headerSize + urlLength + bodyLength else { return nil }
            let urlBytes = UnsafeRawBufferPointer(rebasing: raw[headerSize..<headerSize + urlLength])
            guard urlBytes.elementsEqual(url.absoluteString.utf8) else { return nil }
            let bodyBytes = UnsafeRawBufferPointer(rebasing: raw[(headerSize + urlLength)...])
            guard Hash128(of: bodyBytes) == checksum else { return nil }
            return Array(bodyBytes)
        }
    }

    // MARK: - Writing

    /// Stores `bytes` for `url` atomically, then evicts past `capacity`.
    /// - Throws: `DiskCacheError` when the file cannot be written; the cache is unchanged then.
    public func store(_ bytes: [UInt8], for url: ImageURL) throws(DiskCacheError) {
        let key = Hash128(of: url.absoluteString)
        let urlBytes = Array(url.absoluteString.utf8)
        var file: [UInt8] = []
        file.reserveCapacity(Self.headerSize + urlBytes.count + bytes.count)
        file += Self.magic
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { file += $0 }
        let checksum = Hash128(of: bytes)
        withUnsafeBytes(of: checksum.high.littleEndian) { file += $0 }
        withUnsafeBytes(of: checksum.low.littleEndian) { file += $0 }
        withUnsafeBytes(of: UInt32(urlBytes.count).littleEndian) { file += $0 }
        file += urlBytes
        file += bytes

        let path = self.path(for: key)
        try makeFolder(parent(of: path))
        var template = Array((folder + "/tmp/entry-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw DiskCacheError(path: folder + "/tmp", message: "cannot create a temporary file: \(errnoText())") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var offset = 0
        while offset < file.count {
            let written = file.withUnsafeBytes { cacheWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let message = errnoText()
                close(fd)
                unlink(temporary)
                throw DiskCacheError(path: path, message: "write failed: \(message)")
            }
            offset += written
        }
        fchmod(fd, 0o644)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let message = errnoText()
            unlink(temporary)
            throw DiskCacheError(path: path, message: "rename failed: \(message)")
        }
        let victims: [Hash128] = index.withLock { index in
            index.clock += 1
            if let old = index.entries[key] { index.totalBytes -= old.size }
            index.entries[key] = Entry(size: file.count, lastUse: index.clock)
            index.totalBytes += file.count
            guard index.totalBytes > capacity else { return [] }
            var victims: [Hash128] = []
            let target = capacity / 10 * 9
            for (victim, entry) in index.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where victim != key {
                guard index.totalBytes > target else { break }
                index.entries[victim] = nil
                index.totalBytes -= entry.size
                victims.append(victim)
            }
            return victims
        }
        for victim in victims { unlink(self.path(for: victim)) }
    }

    /// Removes the entry for `url`.
    public func remove(_ url: ImageURL) {
        let key = Hash128(of: url.absoluteString)
        unlink(path(for: key))
        forget(key)
    }

    /// Removes every entry (and stray temporary files).
    public func removeAll() {
        rebuildIndex()  // also what other processes wrote
        for key in index.withLock({ $0.entries.keys.map { $0 } }) { unlink(path(for: key)) }
        for name in listFolder(folder + "/tmp") { unlink(folder + "/tmp/" + name) }
        index.withLock { $0 = Index() }
    }

    /// Every entry: its URL (read from its header) and size; entries with a damaged header are
    /// skipped. Only the headers are read.
    public func entries() -> [(url: String, size: Int)] {
        let keys = index.withLock { $0.entries.keys.map { $0 } }
        return keys.compactMap { readURL(path(for: $0)) }.sorted { $0.url < $1.url }
    }

    /// The URL in the header of the entry at `path`, and the file's size.
    private func readURL(_ path: String) -> (url: String, size: Int)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, Self.headerSize, 0) }) == Self.headerSize,
              Array(header[0..<8]) == Self.magic else { return nil }
        let urlLength = header.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian) }
        guard urlLength < 1 << 16, Int(info.st_size) >= Self.headerSize + urlLength else { return nil }
        var url = [UInt8](repeating: 0, count: urlLength)
        guard url.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, urlLength, off_t(Self.headerSize)) }) == urlLength else { return nil }
        return (String(decoding: url, as: UTF8.self), Int(info.st_size))
    }

    /// Where the entry for `url` lives (or would): `folder/ab/ab…`, for tools and comparisons.
    public func entryPath(for url: ImageURL) -> String {
        path(for: Hash128(of: url.absoluteString))
    }

    /// `folder/ab/ab…`: the entry's path.
    func path(for key: Hash128) -> String {
        let name = key.description
        return folder + "/" + name.prefix(2) + "/" + name
    }

    private func forget(_ key: Hash128) {
        index.withLock { index in
            if let entry = index.entries.removeValue(forKey: key) { index.totalBytes -= entry.size }
        }
    }

    private func rebuildIndex() {
        var fresh = Index()
        for shard in listFolder(folder) where shard.count == 2 {
            for name in listFolder(folder + "/" + shard) {
                guard let key = Hash128(hex: name) else { continue }
                var info = stat()
                guard stat(folder + "/" + shard + "/" + name, &info) == 0 else { continue }
                #if canImport(Darwin)
                let modified = UInt64(max(0, info.st_mtimespec.tv_sec))
                #else
                let modified = UInt64(max(0, info.st_mtim.tv_sec))
                #endif
                fresh.entries[key] = Entry(size: Int(info.st_size), lastUse: modified)
                fresh.totalBytes += Int(info.st_size)
            }
        }
        // Entries used in this process count as newer than any file time.
        fresh.clock = fresh.entries.values.map(\.lastUse).max() ?? 0
        index.withLock { $0 = fresh }
    }

    private func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size < 1 << 31 else { return nil }
        let size = Int(info.st_size)
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size {
                let count = cacheRead(fd, buffer.baseAddress! + offset, size - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                offset += count
            }
            complete = offset == size
            // Bytes past a short read are zeroed so that the array is always initialised.
            if !complete { (buffer.baseAddress! + offset).initialize(repeating: 0, count: size - offset) }
            initialized = size
        }
        return complete ? bytes : nil
    }

    private func listFolder(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private func makeFolder(_ path: String) throws(DiskCacheError) {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        if errno == ENOENT {
            try makeFolder(parent(of: path))
            if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        }
        throw DiskCacheError(path: path, message: "cannot create the folder: \(errnoText())")
    }

    private func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

/// The disk cache could not write or create something: the path and the system's message.
public struct DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or folder.
    public var path: String
    /// What failed.
    public var message: String

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}

private func errnoText() -> String { String(cString: strerror(errno)).lowercased() }
private func cacheRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }
private func cacheWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
