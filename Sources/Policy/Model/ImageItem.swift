/// One entry of a list of images: an original (required), a thumbnail (optional) and an id.
///
/// ```swift
/// let item = ImageItem(id: "42",
///                      original: ImageURL("https://example.com/42.jpg")!,
///                      thumbnail: ImageURL("https://example.com/42-small.jpg"))
/// ```
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
public struct ImageItem: Sendable, Hashable {
    /// The caller's identifier, if any; used only in output.
    public var id: String?
    /// The full-resolution image.
    public var original: ImageURL
    /// The preview image, if the item has one.
    public var thumbnail: ImageURL?
    /// The original's width in pixels, when the item says it.
    public var originalWidth: Int?
    /// The thumbnail's width in pixels, when the item says it.
    public var thumbnailWidth: Int?
    /// The widths the image is offered at, when the item gives them (a `srcset` or a CDN's
    /// template): see ``ImageLadder``. Policies that choose a rung read it; the others, like the
    /// `default` policy, see only `original` and `thumbnail`.
    public var ladder: ImageLadder?

    /// Creates an item.
    public init(id: String? = nil, original: ImageURL, thumbnail: ImageURL? = nil,
                originalWidth: Int? = nil, thumbnailWidth: Int? = nil, ladder: ImageLadder? = nil) {
        self.id = id
        self.original = original
        self.thumbnail = thumbnail
        self.originalWidth = originalWidth
        self.thumbnailWidth = thumbnailWidth
        self.ladder = ladder
    }

    /// An item offered at the widths of `ladder`: its widest rung is the original and, when it
    /// has more than one, its narrowest the thumbnail (the article's two-rung case), widths known.
    public init(id: String? = nil, ladder: ImageLadder) {
        let thumbnail = ladder.rungs.count > 1 ? ladder.narrowest : nil
        self.init(id: id, original: ladder.widest.url, thumbnail: thumbnail?.url,
                  originalWidth: ladder.widest.width, thumbnailWidth: thumbnail?.width, ladder: ladder)
    }

    /// Whether the thumbnail shows as much as the original would in a slot `displayWidth` pixels
    /// wide: the item has a thumbnail of known width, and it is at least the display's width (or
    /// the original's, when that is smaller). False when any of the widths is unknown.
    public func thumbnailCovers(displayWidth: Int?) -> Bool {
        guard thumbnail != nil, let thumbnailWidth, let displayWidth else { return false }
        return thumbnailWidth >= min(displayWidth, originalWidth ?? displayWidth)
    }

    /// The width in pixels of the image at `url`, when the item says it: a rung of its ladder, or
    /// its original or thumbnail with `originalWidth` or `thumbnailWidth`.
    public func width(of url: ImageURL) -> Int? {
        if let rung = ladder?.rung(at: url) { return rung.width }
        if url == original { return originalWidth }
        if url == thumbnail { return thumbnailWidth }
        return nil
    }

    /// The URL of `variant`, or nil for a thumbnail the item does not have.
    public func url(of variant: Variant) -> ImageURL? {
        switch variant {
        case .original: return original
        case .thumbnail: return thumbnail
        }
    }
}
