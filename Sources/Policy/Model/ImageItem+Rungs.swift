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
