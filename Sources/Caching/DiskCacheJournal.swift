import Support

import HTTPSemantics

/// The cache's index on disk: an append-only file of 32-byte records ("stored with this size",
/// "used", "removed"), shared by every process using the folder.
///
/// - Opening a cache reads it once (no `stat` per entry), which gives what the folder holds, the
///   sizes and the access order: least recently used survives restarts. The table is read a
///   probe run at a time, not whole (`DiskCacheStoredTable`), and checked lazily by `DiskCacheIndex`.
/// - A process finds what others appended by reading the new records (one `fstatat` when nothing
///   changed): at every store, and off the asking thread for "is it cached?" (`DiskCache`), so
///   entries written elsewhere become visible to it.
/// - "Used" records (disk hits) are kept in memory and appended in batches (`appendUse(_:)`):
///   with the next other append, every `usesPerAppend`, at a rewrite (as ranks) and on release.
///   A process killed meanwhile loses only those hints, never an entry or a removal.
/// - Appends and rewrites hold `flock(LOCK_EX)` on the file; a rewrite (compaction: one record per
///   entry, in access order) goes through a temporary file and a rename, and other processes
///   notice the new file and read it whole.
/// - Every record is untrusted: a record whose marker or check is wrong is skipped; a file whose
///   header is wrong, or that is not a regular file, is rebuilt from the folder.
///
/// Layout: a 32-byte header (`IMGPOLICY-JOURNAL-2\n`, the table's slot count as UInt32, its seed
/// as UInt64), the index's table as of the last compaction (`DiskCacheIndex.encodedTable()`: one
/// record per slot, zeros for an empty one), then the records appended since.
///
/// Record layout (little-endian): key (16 bytes), size (UInt64; in a table record, the size in the
/// low 40 bits and the rank of use above), operation (1 byte: 1 stored, 2 used, 3 removed,
/// 4 table entry) and the marker `IPJ` (3 bytes), a check (UInt32) over the first 28 bytes.
final class DiskCacheJournal: Sendable {
    enum Operation: UInt8 {
        case stored = 1, used = 2, removed = 3
    }

    struct Record: Equatable {
        var key: Hash128
        var size: Int
        var operation: Operation
    }

    /// A whole file: its table, as an index, and the records after it.
    struct Snapshot {
        /// The stored table (rebuilt from its valid records when it failed its checks).
        let index: DiskCacheIndex
        /// The records after the table.
        let tail: Records
    }

    /// What reading the file found since last time.
    enum Change {
        /// Records appended since the last read (maybe none).
        case appended(Records)
        /// The file was replaced (or read for the first time): all of it, or nil when it is
        /// damaged or new and the index must be rebuilt from the folder.
        case replaced(Snapshot?)
    }

    static let recordSize = 32
    static let magic: [UInt8] = Array("IMGPOLICY-JOURNAL-2\n".utf8)
    /// The largest table (2 million slots, 64 MiB).
    static let largestTable = 1 << 21

    /// The header of a file whose table has `slotCount` slots and `seed`.
    static func header(slotCount: Int, seed: UInt64) -> [UInt8] {
        var bytes = magic
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: slotCount).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: seed.littleEndian) { bytes += $0 }
        return bytes
    }

    /// The slot count and seed in a header, if it is one.
    static func parseHeader(_ raw: UnsafeRawBufferPointer) -> (slotCount: Int, seed: UInt64)? {
        guard raw.count >= recordSize, raw.prefix(magic.count).elementsEqual(magic) else { return nil }
        let slotCount = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self)))
        guard slotCount == 0 || (slotCount.nonzeroBitCount == 1 && slotCount <= largestTable) else { return nil }
        return (slotCount, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    private static let tableTag = UInt32(4) | marker << 8
    private static let rankShift: UInt64 = 40

    /// The table entry in slot `position`, if it is a valid one.
    static func tableEntry(_ raw: UnsafeRawBufferPointer, at position: Int) -> (key: Hash128, size: Int, rank: UInt64)? {
        let base = position * recordSize
        let tag = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 24, as: UInt32.self))
        guard tag == tableTag else { return nil }
        let high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base, as: UInt64.self))
        let low = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self))
        let packed = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self))
        let check = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 28, as: UInt32.self))
        let rank = packed >> rankShift
        guard rank > 0, check == self.check(high, low, packed, tag) else { return nil }
        return (Hash128(high: high, low: low), Int(packed & (1 << rankShift - 1)), rank)
    }

    /// Whether slot `position` is all zeros (an empty slot).
    static func isEmptyRecord(_ raw: UnsafeRawBufferPointer, at position: Int) -> Bool {
        let base = position * recordSize
        return (0..<4).allSatisfy { raw.loadUnaligned(fromByteOffset: base + $0 * 8, as: UInt64.self) == 0 }
    }

    /// Writes a table entry into slot `position` (a rank above 2^24 - 1 is kept at that).
    static func storeTableEntry(into raw: UnsafeMutableRawBufferPointer, at position: Int, key: Hash128, size: Int, rank: UInt64) {
        let base = position * recordSize
        let packed = UInt64(min(max(0, size), 1 << 40 - 1)) | min(rank, 1 << 24 - 1) << rankShift
        raw.storeBytes(of: key.high.littleEndian, toByteOffset: base, as: UInt64.self)
        raw.storeBytes(of: key.low.littleEndian, toByteOffset: base + 8, as: UInt64.self)
        raw.storeBytes(of: packed.littleEndian, toByteOffset: base + 16, as: UInt64.self)
        raw.storeBytes(of: tableTag.littleEndian, toByteOffset: base + 24, as: UInt32.self)
        raw.storeBytes(of: check(key.high, key.low, packed, tableTag).littleEndian, toByteOffset: base + 28, as: UInt32.self)
    }
    /// A journal larger than this (about 2 million records) is not read: it is rebuilt.
    static let largestSize = 64 << 20
    private static let marker: UInt32 = 0x004A_5049  // "IPJ" above the operation byte

    private struct State {
        var fd: Int32 = -1
        var device: UInt64 = 0
        var inode: UInt64 = 0
        /// Where the next read starts.
        var readOffset = 0
        /// Records after the table (an estimate between rewrites).
        var records = 0
        /// Why the file could not be opened for writing (0: it could), when it was opened to read only.
        var readOnlyErrno: Int32 = 0
        /// "Used" records kept in memory, not yet appended (`appendUse(_:)`), oldest first.
        var pendingUses: [Record] = []
    }

    /// "Used" records kept in memory before they are appended in one write: at most this many.
    static let usesPerAppend = 64

    private let folder: DiskCacheFolder
    /// Only read (a cache opened to be looked at, `DiskCache.inspecting`): the file is never
    /// created, removed, given a header or appended to.
    private let readsOnly: Bool
    // Guards the descriptor and the read position; held during the journal's own system calls.
    private let state = Locked(State())

    init(folder: DiskCacheFolder, readsOnly: Bool = false) {
        self.folder = folder
        self.readsOnly = readsOnly
    }

    deinit {
        state.withLock { state in
            // The uses kept in memory are written as the cache goes (a failure is only a lost hint).
            if !state.pendingUses.isEmpty { _ = appendLocked(&state, []) }
            if state.fd >= 0 { close(state.fd) }
        }
    }

    var path: String { folder.path + "/" + DiskCacheFolder.journalName }

    /// Records appended after the table, as last read or written, plus the uses kept in memory.
    var recordCount: Int { state.withLock { $0.records + $0.pendingUses.count } }

    // MARK: - Records

    static func encode(_ records: [Record]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: records.count * recordSize)
        bytes.withUnsafeMutableBytes { raw in
            for (position, record) in records.enumerated() {
                let base = position * recordSize
                raw.storeBytes(of: record.key.high.littleEndian, toByteOffset: base, as: UInt64.self)
                raw.storeBytes(of: record.key.low.littleEndian, toByteOffset: base + 8, as: UInt64.self)
                raw.storeBytes(of: UInt64(max(0, record.size)).littleEndian, toByteOffset: base + 16, as: UInt64.self)
                let tag = UInt32(record.operation.rawValue) | marker << 8
                raw.storeBytes(of: tag.littleEndian, toByteOffset: base + 24, as: UInt32.self)
                let check = self.check(record.key.high, record.key.low, UInt64(max(0, record.size)), tag)
                raw.storeBytes(of: check.littleEndian, toByteOffset: base + 28, as: UInt32.self)
            }
        }
        return bytes
    }

    /// Whole records read from the file, decoded as they are visited: damaged ones are skipped.
    struct Records {
        let bytes: [UInt8]

        /// Records held (damaged ones included).
        var count: Int { bytes.count / DiskCacheJournal.recordSize }

        /// Calls `body` with each valid record, in order.
        func forEach(_ body: (Record) -> Void) {
            bytes.withUnsafeBytes { raw in
                for position in 0..<count {
                    let base = position * DiskCacheJournal.recordSize
                    let high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base, as: UInt64.self))
                    let low = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self))
                    let size = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self))
                    let tag = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 24, as: UInt32.self))
                    let check = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base + 28, as: UInt32.self))
                    guard tag >> 8 == marker, let operation = Operation(rawValue: UInt8(truncatingIfNeeded: tag)),
                          size < 1 << 40, check == DiskCacheJournal.check(high, low, size, tag) else { continue }
                    body(Record(key: Hash128(high: high, low: low), size: Int(size), operation: operation))
                }
            }
        }
    }

    private static func check(_ high: UInt64, _ low: UInt64, _ size: UInt64, _ tag: UInt32) -> UInt32 {
        var mixed = high &* 0x9E37_79B9_7F4A_7C15
        mixed ^= (low &+ 0x632B_E59B_D9B4_E019) &* 0xC2B2_AE3D_27D4_EB4F
        mixed ^= (size ^ UInt64(tag) << 40) &* 0x1656_67B1_9E37_79F9
        mixed ^= mixed >> 29
        return UInt32(truncatingIfNeeded: mixed ^ mixed >> 32)
    }

    // MARK: - Reading

    /// What changed since the last read: one `fstatat` when nothing did.
    func readNew() -> Change {
        state.withLock { state in
            var info = stat()
            let present = fstatat(folder.descriptor, DiskCacheFolder.journalName, &info, AT_SYMLINK_NOFOLLOW) == 0
            if state.fd < 0 || state.readOffset < 0 || !present || UInt64(info.st_ino) != state.inode || UInt64(info.st_dev) != state.device {
                return .replaced(reopen(&state))
            }
            let size = Int(info.st_size)
            guard size > state.readOffset else { return .appended(Records(bytes: [])) }
            guard size <= Self.largestSize else { return .replaced(nil) }
            let length = (size - state.readOffset) / Self.recordSize * Self.recordSize
            guard length > 0, let bytes = FileIO.readAll(state.fd, from: state.readOffset, size: length) else { return .appended(Records(bytes: [])) }
            state.readOffset += length
            let records = Records(bytes: bytes)
            state.records += records.count
            return .appended(records)
        }
    }

    /// Opens the file (creating it), and reads it whole: nil when it is new, damaged or too large.
    private func reopen(_ state: inout State) -> Snapshot? {
        if state.fd >= 0 { close(state.fd) }
        state = State()
        var info = stat()
        // A FIFO, a device or a symbolic link under the journal's name: removed, never opened.
        if !readsOnly, fstatat(folder.descriptor, DiskCacheFolder.journalName, &info, AT_SYMLINK_NOFOLLOW) == 0,
           !FileIO.isRegular(info), !FileIO.isFolder(info) {
            unlinkat(folder.descriptor, DiskCacheFolder.journalName, 0)
        }
        var fd = readsOnly ? -1 : DescriptorReserve.admit(openat(folder.descriptor, DiskCacheFolder.journalName,
                                                                 O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, folder.fileMode))
        if readsOnly {
            state.readOnlyErrno = EROFS
            fd = DescriptorReserve.admit(openat(folder.descriptor, DiskCacheFolder.journalName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        } else if fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS) {
            // Not writable here (another user's cache, an immutable file, a read-only disk): read
            // it all the same; appends fail and are reported.
            state.readOnlyErrno = errno
            fd = DescriptorReserve.admit(openat(folder.descriptor, DiskCacheFolder.journalName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        }
        guard fd >= 0, fstat(fd, &info) == 0, FileIO.isRegular(info) else {
            if fd >= 0 { close(fd) }
            return nil
        }
        state.fd = fd
        state.device = UInt64(info.st_dev)
        state.inode = UInt64(info.st_ino)
        // A new file gets its header, once, under the lock (another process may be creating it too).
        guard flock(fd, LOCK_EX) == 0 else { return nil }
        defer { flock(fd, LOCK_UN) }
        guard fstat(fd, &info) == 0 else { return nil }
        if info.st_size == 0 {
            guard !readsOnly, FileIO.writeAll(fd, Self.header(slotCount: 0, seed: 0)) == nil else { return nil }
            state.readOffset = Self.recordSize
            return nil  // new: the index is built from the folder
        }
        let size = Int(info.st_size) / Self.recordSize * Self.recordSize
        guard size >= Self.recordSize, size <= Self.largestSize,
              let header = FileIO.readAll(fd, from: 0, size: Self.recordSize),
              let (slotCount, seed) = header.withUnsafeBytes({ Self.parseHeader($0) }),
              size >= Self.recordSize * (1 + slotCount) else {
            state.readOffset = max(size, Self.recordSize)
            return nil
        }
        let tableEnd = Self.recordSize * (1 + slotCount)
        let index: DiskCacheIndex
        if slotCount == 0 {
            index = DiskCacheIndex()
        } else if let table = DiskCacheStoredTable(fd: fd, slotCount: slotCount), let lazy = DiskCacheIndex(onDisk: table, seed: seed) {
            // Checked lazily: each lookup checks what it reads; a change copies and checks it whole.
            index = lazy
        } else if let stored = DiskCacheIndex(reading: fd, at: Self.recordSize, slotCount: slotCount, seed: seed) {
            index = stored
        } else {
            // The table failed its checks: its valid entries, inserted one by one.
            guard let table = FileIO.readAll(fd, from: Self.recordSize, size: tableEnd - Self.recordSize) else { return nil }
            index = table.withUnsafeBytes { DiskCacheIndex.rebuilt(fromValidRecordsIn: $0, slotCount: slotCount) }
        }
        let tail = Records(bytes: size > tableEnd ? FileIO.readAll(fd, from: tableEnd, size: size - tableEnd) ?? [] : [])
        state.readOffset = tableEnd + tail.bytes.count
        state.records = tail.count
        return Snapshot(index: index, tail: tail)
    }

    // MARK: - Writing

    /// Appends `records` under the file's lock; when another process replaced the file, to the
    /// new one (which is then read whole on the next `readNew()`). Returns the failure, if any.
    /// The "used" records kept in memory go first, in order.
    @discardableResult
    func append(_ records: [Record]) -> SystemError? {
        guard !records.isEmpty else { return nil }
        return state.withLock { appendLocked(&$0, records) }
    }

    /// Keeps a "used" record in memory; appends the kept ones (with `append(_:)`'s guarantees)
    /// when `usesPerAppend` are kept. A use is only a hint for the order of eviction: a process
    /// killed before then loses its last uses, never an entry. Returns the failure of that append.
    func appendUse(_ record: Record) -> SystemError? {
        state.withLock { state -> SystemError? in
            state.pendingUses.append(record)
            guard state.pendingUses.count >= Self.usesPerAppend else { return nil }
            return appendLocked(&state, [])
        }
    }

    /// Appends the kept uses then `records`, the state's lock held. The kept uses are dropped
    /// whatever happens (they are hints: a journal that cannot be written must not grow memory).
    private func appendLocked(_ state: inout State, _ records: [Record]) -> SystemError? {
        let all = state.pendingUses + records
        state.pendingUses.removeAll(keepingCapacity: true)
        guard !all.isEmpty else { return nil }
        guard !readsOnly else { return SystemError(path: path, errno: 0, action: "cannot append to the journal: the cache was opened to be looked at only") }
        let bytes = Self.encode(all)
        for _ in 0..<3 {
            if state.fd < 0 { _ = reopen(&state) }
            guard state.fd >= 0 else { break }
            guard flock(state.fd, LOCK_EX) == 0 else { return SystemError(path: path, errno: errno, action: "cannot lock the journal") }
            var info = stat()
            guard fstatat(folder.descriptor, DiskCacheFolder.journalName, &info, AT_SYMLINK_NOFOLLOW) == 0,
                  UInt64(info.st_ino) == state.inode, UInt64(info.st_dev) == state.device else {
                // Replaced (compacted) by another process: append to the new file instead.
                flock(state.fd, LOCK_UN)
                close(state.fd)
                state.fd = DescriptorReserve.admit(openat(folder.descriptor, DiskCacheFolder.journalName, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
                state.readOffset = -1  // read whole next time
                state.readOnlyErrno = 0
                if state.fd >= 0, fstat(state.fd, &info) == 0, FileIO.isRegular(info) {
                    state.device = UInt64(info.st_dev)
                    state.inode = UInt64(info.st_ino)
                } else if state.fd >= 0 {
                    close(state.fd)
                    state.fd = -1
                }
                continue
            }
            defer { flock(state.fd, LOCK_UN) }
            guard state.readOnlyErrno == 0 else { return SystemError(path: path, errno: state.readOnlyErrno, action: "cannot append to the journal") }
            // A record torn by a crash leaves the file unaligned: pad to the next record.
            let remainder = Int(info.st_size) % Self.recordSize
            let padding = remainder == 0 ? [] : [UInt8](repeating: 0, count: Self.recordSize - remainder)
            if let reason = FileIO.writeAll(state.fd, padding + bytes) {
                return SystemError(path: path, errno: errno, action: "cannot append to the journal (\(reason))")
            }
            state.records += all.count
            return nil
        }
        return SystemError(path: path, errno: ENOENT, action: "cannot open the journal")
    }

    /// Replaces the file by one holding the table of `index()` (computed while the file is
    /// locked, given the records appended since the last read, so that nothing appended meanwhile
    /// is lost).
    func rewrite(_ index: (Change) -> DiskCacheIndex) throws(DiskCacheError) {
        guard !readsOnly else { throw DiskCacheError(path: path, message: "cannot rewrite the journal: the cache was opened to be looked at only") }
        try state.withLock { (state: inout State) throws(DiskCacheError) in
            if state.fd < 0 { _ = reopen(&state) }
            var locked = state.fd >= 0 && flock(state.fd, LOCK_EX) == 0
            let oldFD = state.fd
            defer { if locked { flock(oldFD, LOCK_UN) } }
            // Read what was appended up to now, under the lock.
            var info = stat()
            let change: Change
            let present = fstatat(folder.descriptor, DiskCacheFolder.journalName, &info, AT_SYMLINK_NOFOLLOW) == 0
            let current = present && UInt64(info.st_ino) == state.inode && UInt64(info.st_dev) == state.device
            if present && FileIO.isRegular(info) && state.fd >= 0 && (!current || state.readOffset < 0) {
                // Another process has just rewritten it: that one is read next time, not overwritten.
                state.readOffset = -1
                return
            }
            if current {
                let length = max(0, (Int(info.st_size) - state.readOffset)) / Self.recordSize * Self.recordSize
                let bytes = length > 0 && Int(info.st_size) <= Self.largestSize ? FileIO.readAll(state.fd, from: state.readOffset, size: length) ?? [] : []
                change = .appended(Records(bytes: bytes))
            } else {
                change = .replaced(nil)
            }
            var content = index(change)
            let temporaryFD: Int32
            switch folder.openSubfolder(DiskCacheFolder.temporaryFolderName, create: true) {
            case .success(let fd): temporaryFD = fd
            case .failure(let error): throw error.cacheError
            }
            defer { close(temporaryFD) }
            let bytes = Self.header(slotCount: content.slotCount, seed: content.seed) + content.encodedTable()
            // Support's atomic replace: a locked temporary `tmp/journal-<16 hex>`, renamed over
            // the journal while this process still holds the old one's lock.
            do throws(AtomicFileWriter.ReplaceFailure) {
                try AtomicFileWriter.replace(bytes, named: DiskCacheFolder.journalName, inFolder: folder.descriptor, mode: folder.fileMode,
                                             temporaryPrefix: "journal-", temporaryFolder: temporaryFD, locksTemporary: true,
                                             durability: .none, existing: .anything)
            } catch {
                switch error.step {
                case .create, .inspect, .notRegular: throw folder.temporaryFailure(error)
                case .write: throw DiskCacheError(path: path, message: "cannot rewrite the journal: \(error.reason)")
                case .setMode: throw DiskCacheError(path: path, message: "cannot rewrite the journal: cannot set the mode: \(error.reason)")
                case .sync, .folderInPlace, .rename: throw DiskCacheError(path: path, message: "cannot replace the journal: \(error.reason)")
                }
            }
            // Switch to the new file: a descriptor opened with O_APPEND.
            let newFD = DescriptorReserve.admit(openat(folder.descriptor, DiskCacheFolder.journalName, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
            guard newFD >= 0, fstat(newFD, &info) == 0 else {
                if newFD >= 0 { close(newFD) }
                state.readOffset = 0
                return
            }
            if locked { flock(oldFD, LOCK_UN) }
            locked = false
            close(oldFD)
            state.fd = newFD
            state.readOnlyErrno = 0
            state.device = UInt64(info.st_dev)
            state.inode = UInt64(info.st_ino)
            state.readOffset = bytes.count
            state.records = 0
            // The kept uses are in the new table's ranks (the index applied them when they were kept).
            state.pendingUses.removeAll(keepingCapacity: true)
        }
    }
}
