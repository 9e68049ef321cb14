import CImageCodecs
import Support

/// Encoders for the tests, the fuzzer's seeds and the benchmark: JPEG (TurboJPEG), WebP, GIF.
/// `package` only: the module's public output is PNG (``PNGEncoder``).
package enum SampleEncoder {
    /// A JPEG at `quality` (1–100), 4:2:0.
    package static func jpeg(_ image: DecodedImage, quality: Int = 90) throws(DecodingError) -> [UInt8] {
        try run("JPEG") { output, count, message in
            image.pixels.withUnsafeBufferPointer {
                imgc_jpeg_encode($0.baseAddress, CInt(image.width), CInt(image.height), image.bytesPerRow, CInt(quality), output, count, message)
            }
        }
    }

    /// A JPEG with `imgc_jpeg_encode_with` options: `IMGC_JPEG_PROGRESSIVE`, `IMGC_JPEG_CMYK` (the
    /// image's four bytes per pixel are then C, M, Y, K, Adobe convention: 255 is no ink).
    package static func jpeg(_ image: DecodedImage, quality: Int, options: CInt) throws(DecodingError) -> [UInt8] {
        try run("JPEG") { output, count, message in
            image.pixels.withUnsafeBufferPointer {
                imgc_jpeg_encode_with($0.baseAddress, CInt(image.width), CInt(image.height), image.bytesPerRow, CInt(quality),
                                      options, output, count, message)
            }
        }
    }

    /// A WebP: lossless when `quality` is nil.
    package static func webp(_ image: DecodedImage, quality: Int? = nil) throws(DecodingError) -> [UInt8] {
        try run("WebP") { output, count, message in
            image.pixels.withUnsafeBufferPointer {
                imgc_webp_encode($0.baseAddress, CInt(image.width), CInt(image.height), image.bytesPerRow, CInt(quality ?? 101), output, count, message)
            }
        }
    }

    /// A GIF of at most 255 colours; pixels with alpha under 128 are transparent.
    package static func gif(_ image: DecodedImage) throws(DecodingError) -> [UInt8] {
        try run("GIF") { output, count, message in
            image.pixels.withUnsafeBufferPointer {
                imgc_gif_encode($0.baseAddress, CInt(image.width), CInt(image.height), image.bytesPerRow, output, count, message)
            }
        }
    }

    static func run(
        _ format: String,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>, UnsafeMutablePointer<CChar>) -> imgc_status
    ) throws(DecodingError) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>? = nil
        var count = 0
        var message = [CChar](repeating: 0, count: Int(IMGC_MESSAGE_CAPACITY))
        let status = message.withUnsafeMutableBufferPointer { body(&output, &count, $0.baseAddress!) }
        defer { imgc_free(output) }
        guard status == IMGC_OK, let output else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw DecodingError(kind: status == IMGC_NO_MEMORY ? .outOfMemory : .corrupt, format: format, detail: "encoding failed: \(text)")
        }
        return Array(UnsafeBufferPointer(start: output, count: count))
    }
}
