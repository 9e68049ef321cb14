import Policy

extension ImageItem {
    /// Where the images of items that no server serves are: port 9 (discard) on 127.0.0.1, where
    /// nothing listens. For downloader doubles, which answer by URL and never connect.
    public static let unservedBase = "http://127.0.0.1:9/"

    /// The test item `name`, the one factory of the tests' items: id `name`, its original at
    /// `base + name + suffix`, its thumbnail at `base + name + "-t" + suffix` (none when
    /// `thumbnail` is false), and the declared widths when given.
    ///
    ///     ImageItem.named("a")                                  // http://127.0.0.1:9/a, …/a-t
    ///     ImageItem.named("a", at: server.url("/"), suffix: ".png", thumbnail: false)
    public static func named(_ name: String, at base: String = unservedBase, suffix: String = "", thumbnail: Bool = true,
                             originalWidth: Int? = nil, thumbnailWidth: Int? = nil) -> ImageItem {
        func url(_ path: String) -> ImageURL {
            guard let url = ImageURL(base + path + suffix) else { preconditionFailure("not a URL: \(base + path + suffix)") }
            return url
        }
        return ImageItem(id: name, original: url(name), thumbnail: thumbnail ? url(name + "-t") : nil,
                         originalWidth: originalWidth, thumbnailWidth: thumbnailWidth)
    }
}
