/// `SampleEncoder`'s JPEG and WebP encoders for the benchmarks package (`Benchmarks/`), which
/// makes its test images with them: a package of its own, which `package` access does not reach.
/// Not API: visible only to `@_spi(Benchmarks) import Decoding`.
///
/// ```swift
/// @_spi(Benchmarks) import Decoding
/// let jpeg = try BenchmarkSampleEncoder.jpeg(image, quality: 90)
/// ```
@_spi(Benchmarks)
public enum BenchmarkSampleEncoder {
    /// A JPEG at `quality` (1–100), 4:2:0, as `SampleEncoder.jpeg(_:quality:)`.
    public static func jpeg(_ image: DecodedImage, quality: Int) throws(DecodingError) -> [UInt8] {
        try SampleEncoder.jpeg(image, quality: quality)
    }

    /// A WebP, lossless when `quality` is nil, as `SampleEncoder.webp(_:quality:)`.
    public static func webp(_ image: DecodedImage, quality: Int?) throws(DecodingError) -> [UInt8] {
        try SampleEncoder.webp(image, quality: quality)
    }
}
