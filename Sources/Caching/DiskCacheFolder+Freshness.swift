import HTTPSemantics
import Support

/// An entry's freshness slots, read or written in place without touching its body.
extension DiskCacheFolder {
    /// What reading or writing an entry's freshness found.
    enum FreshnessOutcome {
        /// Done (for a read: the freshness record).
        case done(HTTPFreshness?)
        /// A format-1 entry (no freshness record), last written at `modified` (seconds since 1970).
        case withoutRecord(modified: Int64)
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
        withEntryHeader(key: key, url: url, writable: false) { _, layout, slots, modified in
            guard layout.format == 2 else { return .withoutRecord(modified: modified) }
            guard let newest = slots.withUnsafeBytes({ DiskCacheEntry.newestSlot($0, slotSize: layout.slotSize) }) else { return .damaged }
            return .done(newest.freshness)
        }
    }

    /// Writes `payload` (an encoded freshness) into the older slot of the entry for `key` (stored
    /// for `url`) with the next generation, under `flock(LOCK_EX)` on the entry. A write torn by a
    /// crash fails its check when read, and the previous slot stands; the body is never written.
    func rewriteFreshness(_ payload: [UInt8], key: Hash128, url: [UInt8]) -> FreshnessOutcome {
        withEntryHeader(key: key, url: url, writable: true) { fd, layout, slots, _ in
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
    /// descriptor (locked with `flock(LOCK_EX)` when `writable`), the layout, the slots and the
    /// file's modification time.
    private func withEntryHeader(key: Hash128, url: [UInt8], writable: Bool,
                                 _ body: (Int32, DiskCacheEntry.Layout, [UInt8], Int64) -> FreshnessOutcome) -> FreshnessOutcome {
        let (shard, name) = Self.entryName(key)
        let shardFD: Int32
        switch openSubfolder(shard, create: false) {
        case .success(let fd): shardFD = fd
        case .failure(let error): return error.errno == ENOENT ? .missing : .failed(error)
        }
        defer { close(shardFD) }
        let fd: Int32
        let info: stat
        switch Self.openRegular(name, in: shardFD, path: entryPath(key), flags: writable ? O_RDWR : O_RDONLY) {
        case .missing: return .missing
        case .failed(let error): return .failed(error)
        case .notRegular: return .damaged
        case .open(let opened, let status):
            fd = opened
            info = status
        }
        defer { close(fd) }
        guard info.st_size >= 0, info.st_size < 1 << 40 else { return .damaged }
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
        return body(fd, layout, Array(stored.dropFirst(url.count)), FileIO.modificationTime(info))
    }
}
