import Policy

/// How good an image a row shows or would load: its variant and, when the item says it, its width
/// (a rung of a ladder, or an original or thumbnail of known width). A row only ever gets better:
/// an image replaces the shown one only when it is better.
struct ShownQuality: Sendable, Hashable {
    /// The variant (the widest rung of a ladder is the original, the others thumbnails).
    var variant: Variant
    /// Its width in pixels, when known.
    var width: Int?

    /// A quality known by its variant only.
    init(_ variant: Variant, width: Int? = nil) {
        self.variant = variant
        self.width = width
    }

    /// The quality of `item`'s image at `url` as `variant`.
    init(_ variant: Variant, url: ImageURL, of item: ImageItem) {
        self.init(variant, width: item.width(of: url))
    }

    /// Whether an image of this quality is at least as good as one of `other`: the wider when
    /// both widths are known, else by variant (the original beats the thumbnail).
    func isAtLeast(_ other: ShownQuality) -> Bool {
        if let width, let otherWidth = other.width { return width >= otherWidth }
        return variant.rank >= other.variant.rank
    }
}
