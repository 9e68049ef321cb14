/// One width an image is offered at: a rung of an ``ImageLadder`` (what one candidate of an HTML
/// `srcset` with a width descriptor says, `photo-400.jpg 400w`).
public struct ImageRung: Sendable, Hashable {
    /// Where this width is served.
    public var url: ImageURL
    /// Its width in pixels.
    public var width: Int
    /// Its size in bytes, when the item says it (a ladder read from a CDN's manifest); nil when
    /// unknown.
    public var bytes: Int?

    /// Creates a rung.
    public init(url: ImageURL, width: Int, bytes: Int? = nil) {
        self.url = url
        self.width = width
        self.bytes = bytes
    }
}
