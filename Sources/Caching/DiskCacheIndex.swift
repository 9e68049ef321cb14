import HTTPSemantics
import Support

/// What the folder holds, in memory: each entry's size and last use, and the total.
///
/// An open-addressing table (linear probing, backward-shift removal) keyed by the entry's
/// `Hash128`. The journal stores this very table when it is compacted (`encodedTable`), so that
/// opening a cache copies it back in one sequential pass (`init(table:)`) instead of inserting
/// every entry. The probe position is mixed with a random seed chosen at each compaction; a
/// stored table is checked as it is loaded (records, probe distances, no gaps in a probe run),
/// and one that fails is rebuilt entry by entry, so that a journal written by someone else can
/// cost time but never a wrong answer for what was checked.
///
/// **Opened lazily.** A journal's table is first left in the file (`init?(onDisk:…)`,
/// `DiskCacheStoredTable`: no read and no allocation of the 12 MiB a 100,000-entry table takes),
/// and the records after it are kept aside: `contains(_:)` then reads the few records of the
/// key's probe run (one `pread`), checking each record it reads (its marker and check) and the
/// run's length, and looks at the kept records for the key. Everything else (a change, a count,
/// the order of use) first reads and checks the table whole, as before, and applies the kept
/// records in order (`materialize()`); so does a lookup that meets a damaged record, a run
/// longer than `longestProbe` or a file shortened under it. A one-shot process (a decision)
/// thus reads only the records its lookups need. What the lazy lookups do not check is the rest
/// of the table: an entry that a damaged table hides behind a gap in its run is "not cached"
/// until the table is materialized (a download too many, never a wrong byte: every entry file is
/// checked whole when it is read).
struct DiskCacheIndex {
    struct Entry {
        var size: Int
        var lastUse: UInt64
    }

    private struct Slot {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var size = 0
        /// 0: the slot is empty.
        var lastUse: UInt64 = 0
    }

    /// A key only, 16 bytes: `keys[i]` is `slots[i]`'s key, or zero when the slot is empty.
    private struct Key {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var isZero: Bool { high == 0 && low == 0 }
    }

    private var slots: [Slot]
    /// The keys of `slots`, probed first (`find`): four to a cache line, half the memory of the
    /// slots, so that a lookup in a large table touches fewer lines and pages. Kept equal to the
    /// slots' keys by every change.
    private var keys: [Key]
    /// Entries whose key is zero (0 or 1; a hash of zero is possible, if improbable, and a
    /// journal may hold one): while there is one, `keys` cannot tell it from an empty slot and
    /// lookups probe `slots` instead.
    private var zeroKeys = 0
    private var mask: Int
    /// Mixed into every probe position; stored with the table in the journal.
    let seed: UInt64
    /// Entries held.
    var count: Int {
        mutating get {
            materialize()
            return storedCount
        }
    }
    /// Bytes of all entries.
    var totalBytes: Int {
        mutating get {
            materialize()
            return storedTotalBytes
        }
    }
    /// The last use stamp given out; every operation takes the next.
    var clock: UInt64 {
        mutating get {
            materialize()
            return storedClock
        }
    }
    /// Whether the table is still only in the file, read lazily (for tests).
    var isLazy: Bool { lazy != nil }
    /// The last use stamp given out; every operation takes the next.
    private var storedClock: UInt64 = 0
    private var storedCount = 0
    private var storedTotalBytes = 0
    /// A journal's table, still in the file and not yet read into `slots` (see the type's
    /// documentation), with the records applied after it, kept in order.
    private var lazy: LazyTable?

    /// A table left in the file and what was applied after it.
    private struct LazyTable {
        let table: DiskCacheStoredTable
        /// Records applied since the table was opened, in order: replayed by `materialize()`.
        var records: [DiskCacheJournal.Record] = []
        /// Per key in `records`, the last size stored, or -1 when it was last removed.
        var latest: [Hash128: Int] = [:]
    }

    init(capacity: Int = 0, seed: UInt64 = .random(in: .min ... .max)) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: Slot(), count: size)
        keys = Array(repeating: Key(), count: size)
        mask = size - 1
        self.seed = seed
    }

    /// The longest probe run a loaded table may have.
    static let longestProbe = 64

    /// The table `encodedTable()` wrote, read from `fd` at `offset` straight into the table's
    /// memory (one copy, one sequential pass), or nil when anything in it is wrong: a short read, a
    /// damaged record, a probe run longer than `longestProbe` or with a gap.
    init?(reading fd: Int32, at offset: Int, slotCount: Int, seed: UInt64) {
        self.init(checking: slotCount, seed: seed) { raw in FileIO.readFully(fd, into: raw, at: offset) }
    }

    /// The table in `records` (as `encodedTable()` wrote it), copied and checked as
    /// `init?(reading:at:slotCount:seed:)` does.
    init?(copying records: UnsafeRawBufferPointer, slotCount: Int, seed: UInt64) {
        self.init(checking: slotCount, seed: seed) { raw in
            guard records.count == raw.count else { return false }
            raw.copyMemory(from: records)
            return true
        }
    }

    /// The table `fill` writes into the slots' memory (false: it could not), checked in one pass.
    private init?(checking slotCount: Int, seed: UInt64, fill: (UnsafeMutableRawBufferPointer) -> Bool) {
        guard slotCount >= 16, slotCount.nonzeroBitCount == 1, MemoryLayout<Slot>.stride == DiskCacheJournal.recordSize else { return nil }
        self.seed = seed
        mask = slotCount - 1
        var valid = true
        var count = 0, totalBytes = 0
        var clock: UInt64 = 0
        var keys = [Key](repeating: Key(), count: slotCount)
        var zeroKeys = 0
        slots = [Slot](unsafeUninitializedCapacity: slotCount) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            if !fill(raw) {
                valid = false
                raw.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: raw.count)
            }
            for position in 0..<slotCount {
                // Each slot is read whole before it is written: the bytes become a `Slot` in place.
                let entry = DiskCacheJournal.tableEntry(UnsafeRawBufferPointer(raw), at: position)
                if entry == nil && valid && !DiskCacheJournal.isEmptyRecord(UnsafeRawBufferPointer(raw), at: position) { valid = false }
                if let entry {
                    (buffer.baseAddress! + position).initialize(to: Slot(high: entry.key.high, low: entry.key.low, size: entry.size, lastUse: entry.rank))
                    keys[position] = Key(high: entry.key.high, low: entry.key.low)
                    if keys[position].isZero { zeroKeys += 1 }
                    count += 1
                    totalBytes += entry.size
                    clock = max(clock, entry.rank)
                } else {
                    (buffer.baseAddress! + position).initialize(to: Slot())
                }
            }
            initialized = slotCount
        }
        self.keys = keys
        self.zeroKeys = zeroKeys
        storedCount = count
        storedTotalBytes = totalBytes
        storedClock = clock
        guard valid, count * 4 <= slotCount * 3 else { return nil }
        // Every member must be reachable from its home: a short run with no gap.
        for position in 0..<slotCount where slots[position].lastUse != 0 {
            let distance = (position - home(slots[position].high, slots[position].low)) & mask
            guard distance <= Self.longestProbe else { return nil }
            if distance > 0 && slots[(position - 1) & mask].lastUse == 0 { return nil }
        }
    }

    /// The valid entries of the table in `records` (one that failed its checks), inserted one by
    /// one in their order of use.
    static func rebuilt(fromValidRecordsIn records: UnsafeRawBufferPointer, slotCount: Int) -> DiskCacheIndex {
        var entries: [(key: Hash128, size: Int, rank: UInt64)] = []
        for position in 0..<min(slotCount, records.count / DiskCacheJournal.recordSize) {
            if let entry = DiskCacheJournal.tableEntry(records, at: position) { entries.append(entry) }
        }
        return DiskCacheIndex(compacting: entries.sorted { $0.rank < $1.rank }.map { ($0.key, $0.size) })
    }

    /// The table of a journal, left in the file and not checked yet (see the type's documentation):
    /// nil when its size is not a table's.
    init?(onDisk table: DiskCacheStoredTable, seed: UInt64) {
        guard table.slotCount >= 16, table.slotCount.nonzeroBitCount == 1 else { return nil }
        self.seed = seed
        mask = table.slotCount - 1
        slots = []
        keys = []
        lazy = LazyTable(table: table)
    }

    /// Reads and checks the table whole, then applies the records kept after it: the index as an
    /// eager load would have made it. Nothing when it is already in memory.
    mutating func materialize() {
        guard let lazy else { return }
        let (records, complete) = lazy.table.readAll()
        var loaded = records.withUnsafeBytes { raw in
            (complete ? DiskCacheIndex(copying: raw, slotCount: lazy.table.slotCount, seed: seed) : nil)
                ?? Self.rebuilt(fromValidRecordsIn: raw, slotCount: lazy.table.slotCount)
        }
        for record in lazy.records { loaded.apply(record) }
        self = loaded
    }

    /// The table left in the file, while the index is lazy, and how many records were kept after
    /// it: what `adopt(_:of:keeping:)` needs to swap in a copy made outside the lock.
    var lazyState: (table: DiskCacheStoredTable, kept: Int)? {
        lazy.map { ($0.table, $0.records.count) }
    }

    /// Takes `copy` (this index as it was with `table` lazy and `kept` records kept, then
    /// materialized elsewhere, outside the lock) when the index is still that table: the records
    /// kept since are applied to it. Returns whether it was taken.
    mutating func adopt(_ copy: DiskCacheIndex, of table: DiskCacheStoredTable, keeping kept: Int) -> Bool {
        guard let lazy, lazy.table === table, lazy.records.count >= kept else { return false }
        var copy = copy
        for record in lazy.records.dropFirst(kept) { copy.apply(record) }
        self = copy
        return true
    }

    /// Records kept after a lazy table before it is materialized anyway (a process that only
    /// looks, while others write).
    static let largestKeptRecords = 1 << 16

    /// A new table of `entries` (least recently used first), sized for them, with a new seed.
    init(compacting entries: [(key: Hash128, size: Int)]) {
        self.init(capacity: entries.count)
        for entry in entries { store(entry.key, size: entry.size) }
    }

    /// The table as journal records (`DiskCacheJournal.tableRecord`), empty slots as zeros;
    /// the order of use is kept as ranks.
    mutating func encodedTable() -> [UInt8] {
        materialize()
        let byUse = slots.indices.filter { slots[$0].lastUse != 0 }.sorted { slots[$0].lastUse < slots[$1].lastUse }
        var bytes = [UInt8](repeating: 0, count: slots.count * DiskCacheJournal.recordSize)
        bytes.withUnsafeMutableBytes { raw in
            for (rank, position) in byUse.enumerated() {
                let slot = slots[position]
                DiskCacheJournal.storeTableEntry(into: raw, at: position, key: Hash128(high: slot.high, low: slot.low),
                                                 size: slot.size, rank: UInt64(rank + 1))
            }
        }
        return bytes
    }

    /// Slots in the table.
    var slotCount: Int { lazy?.table.slotCount ?? slots.count }

    // MARK: - Queries

    /// Whether `key` is held. On a lazy table: the key's probe run read from the file (each
    /// record checked) and a look at the records kept after it; damage, or a file too short to
    /// read the run from, materializes the table first.
    mutating func contains(_ key: Hash128) -> Bool {
        if let lazy {
            if let size = lazy.latest[key] { return size >= 0 }
            switch probeOnDisk(lazy.table, for: key) {
            case .found: return true
            case .absent: return false
            case .damaged: materialize()
            }
        }
        return find(key).found
    }

    subscript(key: Hash128) -> Entry? {
        mutating get {
            materialize()
            let (position, found) = find(key)
            return found ? Entry(size: slots[position].size, lastUse: slots[position].lastUse) : nil
        }
    }

    /// Every entry, least recently used first.
    var byUse: [(key: Hash128, size: Int)] {
        mutating get {
            materialize()
            return slots.filter { $0.lastUse != 0 }.sorted { $0.lastUse < $1.lastUse }.map { (Hash128(high: $0.high, low: $0.low), $0.size) }
        }
    }

    private enum LazyProbe { case found, absent, damaged }

    /// Looks for `key` in the probe run of a table left in the file (`longestProbe + 1` records
    /// from its home, one read), checking each record it reads: a record that is neither empty
    /// nor valid, a member farther than `longestProbe` from its home, or a run that cannot be
    /// read is damage. In a valid table a key is at most `longestProbe` slots from its home.
    private func probeOnDisk(_ table: DiskCacheStoredTable, for key: Hash128) -> LazyProbe {
        let start = home(key.high, key.low)
        return table.withRecords(from: start, count: Self.longestProbe + 1) { run in
            guard let run else { return .damaged }
            for step in 0..<run.count / DiskCacheJournal.recordSize {
                if DiskCacheJournal.isEmptyRecord(run, at: step) { return .absent }
                let position = (start + step) & mask
                guard let entry = DiskCacheJournal.tableEntry(run, at: step),
                      (position - home(entry.key.high, entry.key.low)) & mask <= Self.longestProbe else { return .damaged }
                if entry.key == key { return .found }
            }
            return .absent
        }
    }

    // MARK: - Changes

    /// Applies one journal record (on a lazy table: kept, and replayed when it is materialized).
    mutating func apply(_ record: DiskCacheJournal.Record) {
        if lazy != nil && lazy!.records.count < Self.largestKeptRecords {
            lazy!.records.append(record)
            switch record.operation {
            case .stored: lazy!.latest[record.key] = record.size
            case .removed: lazy!.latest[record.key] = -1
            case .used: break
            }
            return
        }
        switch record.operation {
        case .stored: store(record.key, size: record.size)
        case .used: use(record.key)
        case .removed: remove(record.key)
        }
    }

    /// Sets the entry's size and marks it used.
    mutating func store(_ key: Hash128, size: Int) {
        materialize()
        storedClock += 1
        if (storedCount + 1) * 4 > slots.count * 3 { grow() }
        let (position, found) = find(key)
        if found {
            storedTotalBytes -= slots[position].size
        } else {
            storedCount += 1
            slots[position].high = key.high
            slots[position].low = key.low
            keys[position] = Key(high: key.high, low: key.low)
            if keys[position].isZero { zeroKeys += 1 }
        }
        slots[position].size = size
        slots[position].lastUse = storedClock
        storedTotalBytes += size
    }

    /// Marks the entry used; returns whether it is held.
    @discardableResult
    mutating func use(_ key: Hash128) -> Bool {
        materialize()
        storedClock += 1
        let (position, found) = find(key)
        if found { slots[position].lastUse = storedClock }
        return found
    }

    /// Removes the entry; returns its size when it was held.
    @discardableResult
    mutating func remove(_ key: Hash128) -> Int? {
        materialize()
        storedClock += 1
        var (hole, found) = find(key)
        guard found else { return nil }
        let size = slots[hole].size
        storedTotalBytes -= size
        storedCount -= 1
        if keys[hole].isZero { zeroKeys -= 1 }
        slots[hole] = Slot()
        keys[hole] = Key()
        // Backward shift: move later members of the probe run into the hole when they may.
        var next = (hole + 1) & mask
        while slots[next].lastUse != 0 {
            let home = self.home(slots[next].high, slots[next].low)
            // `next` may move to `hole` when its home is not cyclically within (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                slots[hole] = slots[next]
                slots[next] = Slot()
                keys[hole] = keys[next]
                keys[next] = Key()
                hole = next
            }
            next = (next + 1) & mask
        }
        return size
    }

    // MARK: - Table

    private func home(_ high: UInt64, _ low: UInt64) -> Int {
        var mixed = (high ^ seed) &* 0x9E37_79B9_7F4A_7C15 ^ low
        mixed = (mixed ^ mixed >> 31) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed ^ mixed >> 29) & mask
    }

    /// The key's slot, or the empty slot where it would go: probing `keys` (16 bytes a slot), or
    /// `slots` while an entry's key is zero.
    private func find(_ key: Hash128) -> (position: Int, found: Bool) {
        var position = home(key.high, key.low)
        if zeroKeys == 0 && !(key.high == 0 && key.low == 0) {
            return keys.withUnsafeBufferPointer { keys in
                while true {
                    let probed = keys[position]
                    if probed.high == key.high && probed.low == key.low { return (position, true) }
                    if probed.isZero { return (position, false) }
                    position = (position + 1) & mask
                }
            }
        }
        while true {
            let slot = slots[position]
            if slot.lastUse == 0 { return (position, false) }
            if slot.high == key.high && slot.low == key.low { return (position, true) }
            position = (position + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: old.count * 2)
        keys = Array(repeating: Key(), count: old.count * 2)
        mask = slots.count - 1
        for slot in old where slot.lastUse != 0 {
            var position = home(slot.high, slot.low)
            while slots[position].lastUse != 0 { position = (position + 1) & mask }
            slots[position] = slot
            keys[position] = Key(high: slot.high, low: slot.low)
        }
    }
}
