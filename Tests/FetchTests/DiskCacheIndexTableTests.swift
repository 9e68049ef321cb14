@testable import Fetch
import Testing
import TestSupport

/// The in-memory index's hash table against a `Dictionary`, through random stores, uses and
/// removals (removal shifts members of a probe run back: the part that is easy to get wrong).
struct DiskCacheIndexTableTests {
    @Test(arguments: [1, 2, 3])
    func behavesLikeADictionary(_ seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var table = DiskCacheIndex()
        var model: [Hash128: Int] = [:]
        // Few distinct keys, so that stores, uses and removals hit the same ones often.
        let keys = (0..<600).map { _ in Hash128(high: generator.next(), low: generator.next()) }
        for _ in 0..<20_000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &generator)]
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                let size = Int.random(in: 1...1000, using: &generator)
                table.store(key, size: size)
                model[key] = size
            case 1:
                #expect(table.use(key) == (model[key] != nil))
            default:
                #expect(table.remove(key) == model.removeValue(forKey: key))
            }
        }
        #expect(table.count == model.count)
        #expect(table.totalBytes == model.values.reduce(0, +))
        for key in keys { #expect(table[key]?.size == model[key]) }
        #expect(Set(table.byUse.map(\.key)) == Set(model.keys))
    }

    /// A table of 2 MiB and more lives in memory of its own (huge pages where Linux offers them):
    /// it still holds every entry, and a copy is a value (changing it leaves the original alone).
    @Test func aLargeTableHoldsEveryEntryAndCopiesAreValues() {
        var table = DiskCacheIndex()
        let keys = (0..<70_000).map { Hash128(of: "https://img.example/\($0).png") }
        for (n, key) in keys.enumerated() { table.store(key, size: n) }
        #expect(table.slotCount * 32 >= 2 << 20)
        var copy = table
        for key in keys.prefix(1_000) { copy.remove(key) }
        copy.store(Hash128(of: "new"), size: 1)
        #expect(table.count == 70_000 && copy.count == 69_001)
        #expect(keys.allSatisfy { table.contains($0) })
        #expect(!table.contains(Hash128(of: "new")) && copy.contains(Hash128(of: "new")))
        #expect(keys.prefix(1_000).allSatisfy { !copy.contains($0) } && keys.dropFirst(1_000).allSatisfy { copy.contains($0) })
        #expect(table[keys[12_345]]?.size == 12_345)
    }

    @Test func byUseIsLeastRecentlyUsedFirst() {
        var table = DiskCacheIndex()
        let a = Hash128(of: "a"), b = Hash128(of: "b"), c = Hash128(of: "c")
        table.store(a, size: 1)
        table.store(b, size: 2)
        table.store(c, size: 3)
        table.use(a)
        #expect(table.byUse.map(\.key) == [b, c, a])
    }
}
