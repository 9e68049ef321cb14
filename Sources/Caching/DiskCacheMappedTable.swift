#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A journal's table mapped read-only from the file (`mmap`): the page cache's own pages, so that
/// opening a cache to answer a few lookups (a decision) neither copies nor allocates the table;
/// `DiskCacheIndex` probes it lazily, checking every record it reads, and copies it whole on its
/// first change.
///
/// The mapping covers the header and the table, which no writer ever changes in place: appends go
/// after it, and a compaction writes a new file and renames it over the old one (this mapping
/// keeps the old one's pages). A file shortened under the mapping by someone else (the cache
/// never truncates its journal) would make a read of the lost pages fault: the size is checked
/// before mapping, and the mapping lives only until the index is first changed.
///
/// Thread safety: immutable after `init`; read under the index's lock.
final class DiskCacheMappedTable {
    private let base: UnsafeMutableRawPointer
    private let length: Int
    /// Slots in the table.
    let slotCount: Int

    /// Maps the header and the `slotCount` table records of the journal open as `fd`; nil when
    /// the file is shorter than that or cannot be mapped.
    init?(fd: Int32, slotCount: Int) {
        let length = DiskCacheJournal.recordSize * (1 + slotCount)
        var info = stat()
        guard slotCount > 0, fstat(fd, &info) == 0, Int(info.st_size) >= length else { return nil }
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else { return nil }
        base = mapped
        self.length = length
        self.slotCount = slotCount
    }

    deinit {
        munmap(base, length)
    }

    /// The table's records (after the header), as `DiskCacheIndex.encodedTable()` wrote them.
    var records: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + DiskCacheJournal.recordSize, count: slotCount * DiskCacheJournal.recordSize)
    }
}
