import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Testing
import TestSupport

/// The in-memory index's hash table against a `Dictionary`, through random stores, uses and
/// removals (removal shifts members of a probe run back: the part that is easy to get wrong).
struct DiskCacheIndexTableTests {
    @Test(arguments: [1, 2, 3])
    func behavesLikeADictionary(_ seed: UInt64) {
        var generator = SeededGenerator(seed: seed, label: "index table like a dictionary")
        // Few distinct keys, so that stores, uses and removals hit the same ones often.
        let keys = (0..<600).map { _ in Hash128(high: generator.next(), low: generator.next()) }
        checkAgainstADictionary(keys, generator: &generator)
    }

    /// A key of zero looks like an empty slot in the table's key array: the table must still find
    /// it, and every other key, while it is stored and after it is removed (keys with one half
    /// zero too).
    @Test(arguments: [4, 5, 6])
    func behavesLikeADictionaryWithAZeroKey(_ seed: UInt64) {
        var generator = SeededGenerator(seed: seed, label: "index table with a zero key")
        var keys = (0..<300).map { _ in Hash128(high: generator.next(), low: generator.next()) }
        keys += [Hash128(high: 0, low: 0), Hash128(high: 0, low: 1), Hash128(high: 1, low: 0), Hash128(high: 0, low: generator.next())]
        checkAgainstADictionary(keys, generator: &generator)
    }

    private func checkAgainstADictionary(_ keys: [Hash128], generator: inout SeededGenerator) {
        var table = DiskCacheIndex()
        var model: [Hash128: Int] = [:]
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
