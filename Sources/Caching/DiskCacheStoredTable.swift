import Support

/// A journal's table left where it is, in the file, and read a few records at a time (`pread`),
/// so that opening a cache to answer a few lookups (a decision) neither reads nor allocates the
/// whole table; `DiskCacheIndex` probes it lazily, checking every record it reads, and reads it
/// whole on its first change.
///
/// It holds a descriptor of its own (a duplicate of the journal's), so it reads the file it was
/// opened on: the header and the table, which no writer ever changes in place (appends go after
/// it, and a compaction writes a new file and renames it over the old one). Why not `mmap`: a
/// file shortened under a mapping by someone else makes a read of the lost pages fault (`SIGBUS`,
/// the process dies); a short `pread` is an answer like any other (the table is then treated as
/// damaged: rebuilt from what could be read, a download too many at worst).
///
/// Thread safety: immutable after `init`; `pread` at explicit offsets shares no file position.
final class DiskCacheStoredTable: Sendable {
    private let fd: Int32
    /// Slots in the table.
    let slotCount: Int

    /// The `slotCount` table records of the journal open as `fd` (after its header); nil when
    /// the file is shorter than that or no descriptor is left to duplicate it.
    init?(fd: Int32, slotCount: Int) {
        var info = stat()
        guard slotCount > 0, fstat(fd, &info) == 0,
              Int(info.st_size) >= DiskCacheJournal.recordSize * (1 + slotCount) else { return nil }
        // Within the descriptors the package leaves for the runtime, it is not taken: the table is
        // then read whole at open instead.
        let own = DescriptorReserve.admit(fcntl(fd, F_DUPFD_CLOEXEC, 0))
        guard own >= 0 else { return nil }
        self.fd = own
        self.slotCount = slotCount
    }

    deinit {
        close(fd)
    }

    /// Calls `body` with the `count` records (at most `slotCount`) that start at slot `position`,
    /// wrapping past the last slot to the first as a probe does; with nil when they cannot all be
    /// read (the file was shortened, or a read failed).
    func withRecords<Result>(from position: Int, count: Int, _ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
        let count = min(count, slotCount)
        let size = DiskCacheJournal.recordSize
        let first = min(count, slotCount - position)
        var bytes = [UInt8](repeating: 0, count: count * size)
        let complete = bytes.withUnsafeMutableBytes { raw in
            FileIO.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<first * size]), at: size * (1 + position))
                && (first == count || FileIO.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[first * size..<count * size]), at: size))
        }
        return bytes.withUnsafeBytes { body(complete ? $0 : nil) }
    }

    /// The whole table as `DiskCacheIndex.encodedTable()` wrote it (zeros where it could not be
    /// read), and whether all of it was read.
    func readAll() -> (records: [UInt8], complete: Bool) {
        var bytes = [UInt8](repeating: 0, count: slotCount * DiskCacheJournal.recordSize)
        let complete = bytes.withUnsafeMutableBytes { FileIO.readFully(fd, into: $0, at: DiskCacheJournal.recordSize) }
        return (bytes, complete)
    }
}
