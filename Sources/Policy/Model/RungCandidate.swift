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
