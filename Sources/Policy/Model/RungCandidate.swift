/// One rung a rung rule can choose for an item, narrowest first: a rung of the item's ladder, or,
/// for an item without one, its thumbnail and its original (their widths when the item says them).
struct RungCandidate: Sendable, Hashable {
    /// Where it is served.
    var url: ImageURL
    /// Its width in pixels; nil when the item does not say it.
    var width: Int?
    /// Its size in bytes; nil when the item does not say it.
    var bytes: Int?

    /// Whether it shows a display `wanted` pixels wide fully: it is at least that wide; a rung of
    /// unknown width covers only when it is the widest (the full resolution).
    func covers(_ wanted: Int, isWidest: Bool) -> Bool {
        width.map { $0 >= wanted } ?? isWidest
    }

    /// The rung, when its width is known.
    var rung: ImageRung? { width.map { ImageRung(url: url, width: $0, bytes: bytes) } }
}

extension ImageItem {
    /// The rungs a rung rule chooses among, narrowest first: the ladder's, or the thumbnail (when
    /// the item has one) and the original. Never empty.
    var rungCandidates: [RungCandidate] {
        if let ladder {
            return ladder.rungs.map { RungCandidate(url: $0.url, width: $0.width, bytes: $0.bytes) }
        }
        var candidates: [RungCandidate] = []
        if let thumbnail { candidates.append(RungCandidate(url: thumbnail, width: thumbnailWidth)) }
        candidates.append(RungCandidate(url: original, width: originalWidth))
        return candidates
    }

    /// The variant a rung stands for in the ledger and the statistics: the widest is the original,
    /// every other the thumbnail.
    func variant(ofRungAt index: Int, of count: Int) -> Variant {
        index == count - 1 ? .original : .thumbnail
    }
}

/// Which of an item's rung candidates are cached: bit `i` for candidate `i`.
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
