import CImageCodecs

/// Encodes a ``DecodedImage`` as PNG (libpng), RGBA with straight alpha.
public struct PNGEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// The PNG bytes of `image`.
    public func encode(_ image: DecodedImage) throws(DecodingError) -> [UInt8] {
        try SampleEncoder.run("PNG") { output, count, message in
            image.pixels.withUnsafeBufferPointer { pixels in
                imgc_png_encode(pixels.baseAddress, CInt(image.width), CInt(image.height), image.bytesPerRow, output, count, message)
            }
        }
    }
}
