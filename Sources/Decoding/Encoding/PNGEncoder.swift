import CImageCodecs

/// Encodes a ``DecodedImage`` as PNG (libpng), RGBA with straight alpha.
///
/// The PNG's memory is allocated with `malloc` and checked: an image whose PNG does not fit in
/// memory is ``DecodingError/Kind/outOfMemory``, never a trap.
///
/// ```swift
/// let png = try PNGEncoder().encode(image)
/// try Data(png).write(to: url)
/// ```
public struct PNGEncoder: Sendable {
    private let memory: ImageMemory

    /// Creates an encoder.
    public init() {
        self.init(memory: .system)
    }

    /// An encoder taking its output buffer from `memory`.
    init(memory: ImageMemory) {
        self.memory = memory
    }

    /// The PNG bytes of `image`.
    public func encode(_ image: DecodedImage) throws(DecodingError) -> ImageBytes {
        let (width, height) = (CInt(image.width), CInt(image.height))
        let capacity = imgc_png_encode_capacity(width, height)
        let what = "the PNG of a \(image.width)x\(image.height) image"
        let output = try memory.allocation(capacity == 0 ? -1 : capacity, for: what, format: "PNG", size: nil)
        var count = 0
        var message = [CChar](repeating: 0, count: Int(IMGC_MESSAGE_CAPACITY))
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { text in
                imgc_png_encode(pixels.baseAddress, width, height, image.bytesPerRow, output.base, capacity, &count, text.baseAddress)
            }
        }
        guard status == IMGC_OK else {
            let text = ImageCodec.text(message)
            throw DecodingError(kind: status == IMGC_NO_MEMORY ? .outOfMemory : .corrupt, format: "PNG", detail: "encoding failed: \(text)")
        }
        output.shrink(to: count)
        return ImageBytes(output)
    }
}
