/// Which of an item's images a rung decision may use are cached: bit `i` for the item's `i`-th
/// image narrowest first (its ladder's rungs, with its own original and thumbnail when it gives
/// them besides, sorted by width as `RungChoice` describes). Make one with `init(of:in:)` or
/// `init(of:cachedVariants:)`; raw bits are for code that keeps that order itself.
public struct CachedRungs: Sendable, Hashable {
    /// One bit per rung, narrowest first.
    public var bits: UInt64

    /// A set from raw bits.
    public init(bits: UInt64) { self.bits = bits }

    /// Nothing cached.
    public static let none = CachedRungs(bits: 0)

    /// Whether the rung at `index` is cached.
    public func contains(_ index: Int) -> Bool { index < 64 && bits & (1 << UInt64(index)) != 0 }

    /// The cached rungs of `item` that `cache` holds.
    public init(of item: ImageItem, in cache: some CacheInspecting) {
        var bits: UInt64 = 0
        for (index, candidate) in item.rungCandidates.enumerated() where cache.containsImage(at: candidate.url) {
            bits |= 1 << UInt64(index)
        }
        self.bits = bits
    }

    /// The rungs of `item` that are its cached original and thumbnail (what a cache asked only
    /// about those two says).
    public init(of item: ImageItem, cachedVariants: CachedVariants) {
        var bits: UInt64 = 0
        for (index, candidate) in item.rungCandidates.enumerated() {
            if (cachedVariants.has(.original) && candidate.url == item.original)
                || (cachedVariants.has(.thumbnail) && candidate.url == item.thumbnail) {
                bits |= 1 << UInt64(index)
            }
        }
        self.bits = bits
    }

    /// The narrowest cached rung of `candidates` that covers a display `displayWidth` pixels wide
    /// (as wide as the display, or as the widest rung when the display is wider; nil: not known,
    /// then only the widest covers), or nil.
    func coveringIndex(among candidates: [RungCandidate], displayWidth: Int?) -> Int? {
        let last = candidates.count - 1
        let wanted = displayWidth.map { display in candidates[last].width.map { min(display, $0) } ?? display }
        return candidates.indices.first { index in
            contains(index) && (wanted.map { candidates[index].covers($0, isWidest: index == last) } ?? (index == last))
        }
    }

    /// The widest cached rung of `candidates`, or nil.
    func widestIndex(among candidates: [RungCandidate]) -> Int? {
        candidates.indices.last { contains($0) }
    }
}
