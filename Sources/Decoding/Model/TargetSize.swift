/// The pixel size to decode to: a box and how the image goes into it. Never upscaled.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public struct TargetSize: Sendable, Hashable, CustomStringConvertible {
    /// How the image is scaled to the box, keeping its aspect ratio.
    public enum ContentMode: Sendable, Hashable {
        /// The whole image inside the box (both sides at most the box's).
        case fit
        /// The image covers the box (both sides at least the box's, one equal); nothing is cropped.
        case fill
    }

    /// Box width in pixels (points × scale).
    public var width: Int
    /// Box height in pixels.
    public var height: Int
    /// Fit (default) or fill.
    public var contentMode: ContentMode

    /// A box of `width` × `height` pixels (each at least 1).
    public init(width: Int, height: Int, contentMode: ContentMode = .fit) {
        precondition(width > 0 && height > 0, "TargetSize: width and height must be positive")
        self.width = width
        self.height = height
        self.contentMode = contentMode
    }

    /// `WxH`, followed by ` fill` for ``ContentMode-swift.enum/fill``.
    public var description: String { "\(width)x\(height)\(contentMode == .fill ? " fill" : "")" }

    /// The size an image of `width` × `height` gets: scaled by one factor, at most 1, at least 1 pixel.
    func scaled(width sourceWidth: Int, height sourceHeight: Int) -> (width: Int, height: Int) {
        let sx = Double(width) / Double(sourceWidth), sy = Double(height) / Double(sourceHeight)
        let scale = min(1, contentMode == .fit ? min(sx, sy) : max(sx, sy))
        if scale >= 1 { return (sourceWidth, sourceHeight) }
        let w = max(1, min(sourceWidth, Int((Double(sourceWidth) * scale).rounded())))
        let h = max(1, min(sourceHeight, Int((Double(sourceHeight) * scale).rounded())))
        return (w, h)
    }
}
