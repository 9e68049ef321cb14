// libFuzzer target: the decoders' glue (format sniffing, headers, EXIF orientation, each C
// wrapper, the resampler) over arbitrary bytes. Built and run by scripts/fuzz.sh.
@testable import Decoding

@_cdecl("LLVMFuzzerTestOneInput")
public func decodeFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    // A small limit keeps each input within the fuzzer's memory budget; the limit's own check is
    // part of what is fuzzed.
    let decoder = ImageDecoder(configuration: .init(pixelLimit: 4_000_000))
    // The orientation parser alone, on every input (any JPEG-looking prefix reaches it).
    _ = bytes.withUnsafeBufferPointer { ExifOrientation.of(jpeg: $0) }
    let side = 1 + Int(bytes.last ?? 0) % 48
    for target in [nil, TargetSize(width: side, height: side), TargetSize(width: side, height: 7, contentMode: .fill)] {
        guard let image = try? decoder.decode(bytes, to: target) else { continue }
        precondition(image.width > 0 && image.height > 0)
        precondition(image.pixels.count == image.bytesPerRow * image.height && image.bytesPerRow == image.width * 4)
        if let target, target.contentMode == .fit {
            precondition(image.width <= target.width || image.height <= target.height)
        }
    }
    return 0
}
