/// Decoded pixels: RGBA8, **not premultiplied**, rows top to bottom, EXIF orientation applied.
///
/// Each pixel is four bytes in memory order R, G, B, A (straight alpha), as GdkPixbuf,
/// SDL's `SDL_PIXELFORMAT_RGBA32` and PNG take them. Rows are `bytesPerRow` bytes apart
/// (`width * 4` for images this module makes).
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public struct DecodedImage: Sendable, Equatable {
    /// Width in pixels (at least 1).
    public let width: Int
    /// Height in pixels (at least 1).
    public let height: Int
    /// Bytes from one row to the next.
    public let bytesPerRow: Int
    /// `bytesPerRow * height` bytes of RGBA8, not premultiplied. A decoder's pixels are in
    /// memory of their own (``ImageBytes``: `malloc`, checked), read in place with
    /// `withUnsafeBytes`, by index, or copied with `Array(image.pixels)`.
    public let pixels: ImageBytes

    /// Creates an image; `pixels` must hold `bytesPerRow * height` bytes, `bytesPerRow >= width * 4`.
    /// The array is kept as it is (not copied).
    public init(width: Int, height: Int, bytesPerRow: Int, pixels: [UInt8]) {
        self.init(width: width, height: height, bytesPerRow: bytesPerRow, pixels: ImageBytes(pixels))
    }

    /// Creates an image over `pixels` (not copied), which must hold `bytesPerRow * height` bytes,
    /// `bytesPerRow >= width * 4`.
    public init(width: Int, height: Int, bytesPerRow: Int, pixels: ImageBytes) {
        precondition(width > 0 && height > 0 && bytesPerRow >= width * 4 && pixels.count >= bytesPerRow * height,
                     "DecodedImage: pixels do not match the dimensions")
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
    }

    /// The bytes the pixels take (`bytesPerRow * height`): a pixel cache's cost.
    public var byteCount: Int { bytesPerRow * height }

    /// The pixel at (x, y) as (r, g, b, a).
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = y * bytesPerRow + x * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}
