/// What the folder holds, in memory: each entry's size and last use, and the total.
///
/// An open-addressing table (linear probing, backward-shift removal) keyed by the entry's
/// `Hash128`, whose bits are already uniform: no `Hasher` pass per key, so that building the index
/// of 100,000 entries when a cache opens costs about a millisecond. The probe position is mixed with a
/// per-process random seed, so that keys chosen by someone who can write the journal cannot make
/// every key collide.
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

    private var slots: [Slot]
    private var mask: Int
    private let seed = UInt64.random(in: .min ... .max)
    /// Entries held.
    private(set) var count = 0
    /// Bytes of all entries.
    private(set) var totalBytes = 0
    /// The last use stamp given out; every operation takes the next.
    private(set) var clock: UInt64 = 0

    init(capacity: Int = 0) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: Slot(), count: size)
        mask = size - 1
    }

    // MARK: - Queries

    func contains(_ key: Hash128) -> Bool { find(key).found }

    subscript(key: Hash128) -> Entry? {
        let (position, found) = find(key)
        return found ? Entry(size: slots[position].size, lastUse: slots[position].lastUse) : nil
    }

    /// Every entry, least recently used first.
    var byUse: [(key: Hash128, size: Int)] {
        slots.filter { $0.lastUse != 0 }.sorted { $0.lastUse < $1.lastUse }.map { (Hash128(high: $0.high, low: $0.low), $0.size) }
    }

    // MARK: - Changes

    /// Applies one journal record.
    mutating func apply(_ record: DiskCacheJournal.Record) {
        switch record.operation {
        case .stored: store(record.key, size: record.size)
        case .used: use(record.key)
        case .removed: remove(record.key)
        }
    }

    /// Sets the entry's size and marks it used.
    mutating func store(_ key: Hash128, size: Int) {
        clock += 1
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let (position, found) = find(key)
        if found {
            totalBytes -= slots[position].size
        } else {
            count += 1
            slots[position].high = key.high
            slots[position].low = key.low
        }
        slots[position].size = size
        slots[position].lastUse = clock
        totalBytes += size
    }

    /// Marks the entry used; returns whether it is held.
    @discardableResult
    mutating func use(_ key: Hash128) -> Bool {
        clock += 1
        let (position, found) = find(key)
        if found { slots[position].lastUse = clock }
        return found
    }

    /// Removes the entry; returns its size when it was held.
    @discardableResult
    mutating func remove(_ key: Hash128) -> Int? {
        clock += 1
        var (hole, found) = find(key)
        guard found else { return nil }
        let size = slots[hole].size
        totalBytes -= size
        count -= 1
        slots[hole] = Slot()
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

    /// The key's slot, or the empty slot where it would go.
    private func find(_ key: Hash128) -> (position: Int, found: Bool) {
        var position = home(key.high, key.low)
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
        mask = slots.count - 1
        for slot in old where slot.lastUse != 0 {
            var position = home(slot.high, slot.low)
            while slots[position].lastUse != 0 { position = (position + 1) & mask }
            slots[position] = slot
        }
    }
}
