#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory of `DiskCacheIndex`'s table: a fixed number of slots, copied on write (a value, as
/// an array). A table of 2 MiB or more (65,536 slots: about 24,000 entries and up) is aligned to
/// 2 MiB and asked for transparent huge pages (`MADV_HUGEPAGE`, Linux) before it is touched: "is
/// it cached?" on a large index then costs one cache miss and rarely a TLB miss, instead of a
/// page walk that the index's lock does not let the processor overlap with anything. Where huge
/// pages are off, this is ordinary memory.
struct DiskCacheSlots {
    private final class Storage {
        let base: UnsafeMutablePointer<DiskCacheIndex.Slot>
        let count: Int

        /// Memory for `count` slots, not initialized.
        init(count: Int) {
            let bytes = count * MemoryLayout<DiskCacheIndex.Slot>.stride
            let hugePage = 2 << 20
            var memory: UnsafeMutableRawPointer?
            let alignment = bytes >= hugePage ? hugePage : MemoryLayout<DiskCacheIndex.Slot>.alignment
            if posix_memalign(&memory, max(alignment, MemoryLayout<Int>.size), bytes) != 0 || memory == nil {
                memory = UnsafeMutableRawPointer(UnsafeMutablePointer<DiskCacheIndex.Slot>.allocate(capacity: count))
                base = memory!.assumingMemoryBound(to: DiskCacheIndex.Slot.self)
                self.count = count
                allocatedBySwift = true
                return
            }
            #if os(Linux)
            if bytes >= hugePage { _ = madvise(memory, bytes, MADV_HUGEPAGE) }
            #endif
            base = memory!.bindMemory(to: DiskCacheIndex.Slot.self, capacity: count)
            self.count = count
            allocatedBySwift = false
        }

        private let allocatedBySwift: Bool

        deinit {
            if allocatedBySwift { base.deallocate() } else { free(base) }
        }
    }

    private var storage: Storage

    /// `count` empty slots.
    init(count: Int) {
        storage = Storage(count: count)
        storage.base.initialize(repeating: DiskCacheIndex.Slot(), count: count)
    }

    /// `count` slots that `fill` initializes, every one of them.
    init(count: Int, fill: (UnsafeMutableBufferPointer<DiskCacheIndex.Slot>) -> Void) {
        storage = Storage(count: count)
        fill(UnsafeMutableBufferPointer(start: storage.base, count: count))
    }

    /// Slots held.
    var count: Int { storage.count }

    /// The slot at `position` (in `0..<count`).
    subscript(position: Int) -> DiskCacheIndex.Slot {
        get {
            precondition(position >= 0 && position < storage.count)
            return storage.base[position]
        }
        set {
            precondition(position >= 0 && position < storage.count)
            if !isKnownUniquelyReferenced(&storage) {
                let copy = Storage(count: storage.count)
                copy.base.initialize(from: storage.base, count: storage.count)
                storage = copy
            }
            storage.base[position] = newValue
        }
    }

    /// The slots in use, in table order.
    var occupied: [DiskCacheIndex.Slot] {
        UnsafeBufferPointer(start: storage.base, count: storage.count).filter { $0.lastUse != 0 }
    }
}
