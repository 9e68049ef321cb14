/// One entry of a list of images: an original (required), a thumbnail (optional) and an id.
///
/// ```swift
/// let item = ImageItem(id: "42",
///                      original: ImageURL("https://example.com/42.jpg")!,
///                      thumbnail: ImageURL("https://example.com/42-small.jpg"))
/// ```
public struct ImageItem: Sendable, Hashable {
    /// The caller's identifier, if any; used only in output.
    public var id: String?
    /// The full-resolution image.
    public var original: ImageURL
    /// The preview image, if the item has one.
    public var thumbnail: ImageURL?

    /// Creates an item.
    public init(id: String? = nil, original: ImageURL, thumbnail: ImageURL? = nil) {
        self.id = id
        self.original = original
        self.thumbnail = thumbnail
    }

    /// The URL of `variant`, or nil for a thumbnail the item does not have.
    public func url(of variant: Variant) -> ImageURL? {
        switch variant {
        case .original: return original
        case .thumbnail: return thumbnail
        }
    }
}
