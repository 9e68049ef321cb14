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
    /// The rungs a rung rule chooses among, narrowest first: the ladder's, with the item's own
    /// original and thumbnail when it gives them besides (each URL once); or, for an item without
    /// a ladder, its thumbnail (when it has one) and its original. Sorted by width: an original of
    /// unknown width is the widest (the full resolution), a thumbnail of unknown width the
    /// narrowest. Never empty.
    var rungCandidates: [RungCandidate] {
        var candidates = ladder?.rungs.map { RungCandidate(url: $0.url, width: $0.width, bytes: $0.bytes) } ?? []
        // Sort keys: an unknown width sorts as 0 for a thumbnail and past every width for the original.
        var keys = candidates.map { $0.width ?? 0 }
        if let thumbnail, !candidates.contains(where: { $0.url == thumbnail }) {
            candidates.append(RungCandidate(url: thumbnail, width: thumbnailWidth))
            keys.append(thumbnailWidth ?? 0)
        }
        if !candidates.contains(where: { $0.url == original }) {
            candidates.append(RungCandidate(url: original, width: originalWidth))
            keys.append(originalWidth ?? Int.max)
        }
        // Stable: equal widths keep the ladder first, then the thumbnail, then the original.
        return candidates.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }.map { candidates[$0] }
    }

    /// The variant a rung stands for in the ledger and the statistics: the item's original URL
    /// is the original, every other rung a thumbnail.
    func variant(of candidate: RungCandidate) -> Variant {
        candidate.url == original ? .original : .thumbnail
    }

    /// The URLs of the item's images narrower than the one at `url` (by the rules of
    /// `RungChoice`: its ladder, thumbnail and original by width), widest first: what to show
    /// instead when `url` cannot be loaded. Empty for the narrowest, and for a URL that is none of
    /// the item's.
    public func narrowerImages(than url: ImageURL) -> [ImageURL] {
        let candidates = rungCandidates
        guard let index = candidates.firstIndex(where: { $0.url == url }) else { return [] }
        return candidates[..<index].reversed().map(\.url)
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
