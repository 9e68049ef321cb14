#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry's freshness slots, read or written in place without touching its body.
extension DiskCacheFolder {
    /// What reading or writing an entry's freshness found.
    enum FreshnessOutcome {
        /// Done (for a read: `freshness` holds the answer; nil for a format-1 entry).
        case done(HTTPFreshness?)
        /// No entry.
        case missing
        /// A format-1 entry, or one whose slots are too small for the new record: the caller
        /// rewrites the whole entry.
        case needsWholeRewrite
        /// Not an intact entry for this URL (or not a regular file): the caller's full read
        /// removes it.
        case damaged
        case failed(SystemError)
    }

    /// The freshness of the entry for `key` (stored for `url`), reading only its header, URL and
    /// slots: never the body.
    func readFreshness(key: Hash128, url: [UInt8]) -> FreshnessOutcome {
        withEntryHeader(key: key, url: url, writable: false) { _, layout, slots in
            guard layout.format == 2 else { return .done(nil) }
            guard let newest = slots.withUnsafeBytes({ DiskCacheEntry.newestSlot($0, slotSize: layout.slotSize) }) else { return .damaged }
            return .done(newest.freshness)
        }
    }

    /// Writes `payload` (an encoded freshness) into the older slot of the entry for `key` (stored
    /// for `url`) with the next generation, under `flock(LOCK_EX)` on the entry. A write torn by a
    /// crash fails its check when read, and the previous slot stands; the body is never written.
    func rewriteFreshness(_ payload: [UInt8], key: Hash128, url: [UInt8]) -> FreshnessOutcome {
        withEntryHeader(key: key, url: url, writable: true) { fd, layout, slots in
            guard layout.format == 2, DiskCacheEntry.fits(payload, slotSize: layout.slotSize) else { return .needsWholeRewrite }
            guard let newest = slots.withUnsafeBytes({ DiskCacheEntry.newestSlot($0, slotSize: layout.slotSize) }) else { return .damaged }
            let position = 1 - newest.position
            let slot = DiskCacheEntry.slot(payload, generation: newest.generation &+ 1, size: layout.slotSize)
            let offset = off_t(layout.slotsOffset + position * layout.slotSize)
            let written = slot.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
            guard written == slot.count else {
                return .failed(SystemError(path: entryPath(key), errno: written < 0 ? errno : ENOSPC, action: "cannot write the entry's freshness"))
            }
            return .done(nil)
        }
    }

    /// Opens the entry for `key` (a regular file in a real shard, never through a symbolic link,
    /// never blocking), checks its header and URL, reads its slots, and calls `body` with the
    /// descriptor (locked with `flock(LOCK_EX)` when `writable`).
    private func withEntryHeader(key: Hash128, url: [UInt8], writable: Bool,
                                 _ body: (Int32, DiskCacheEntry.Layout, [UInt8]) -> FreshnessOutcome) -> FreshnessOutcome {
        let (shard, name) = Self.entryName(key)
        let shardFD = openat(descriptor, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard shardFD >= 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: path + "/" + shard, errno: errno, action: "cannot open the shard folder"))
        }
        defer { close(shardFD) }
        var info = stat()
        guard fstatat(shardFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: entryPath(key), errno: errno, action: "cannot read"))
        }
        guard Self.isRegular(info) else { return .damaged }
        let fd = openat(shardFD, name, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return errno == ENOENT ? .missing : .failed(SystemError(path: entryPath(key), errno: errno, action: "cannot open"))
        }
        defer { close(fd) }
        guard fstat(fd, &info) == 0, Self.isRegular(info), info.st_size >= 0, info.st_size < 1 << 40 else { return .damaged }
        if writable && flock(fd, LOCK_EX) != 0 {
            return .failed(SystemError(path: entryPath(key), errno: errno, action: "cannot lock"))
        }
        defer { if writable { flock(fd, LOCK_UN) } }
        let size = Int(info.st_size)
        let headerLength = min(size, DiskCacheEntry.headerSize)
        var header = [UInt8](repeating: 0, count: headerLength)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, headerLength, 0) }) == headerLength,
              let layout = header.withUnsafeBytes({ DiskCacheEntry.layout(header: $0, fileSize: size) }),
              layout.urlLength == url.count else { return .damaged }
        let length = layout.urlLength + 2 * layout.slotSize
        var stored = [UInt8](repeating: 0, count: length)
        guard stored.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, length, off_t(layout.urlOffset)) }) == length,
              stored.prefix(url.count).elementsEqual(url) else { return .damaged }
        return body(fd, layout, Array(stored.dropFirst(url.count)))
    }
}
