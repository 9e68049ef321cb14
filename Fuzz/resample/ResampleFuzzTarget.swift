// libFuzzer target: the resampler (`ImageDecoder.resample`, the C `imgc_resample` under it) at
// random sizes and ratios, as a JPEG's scaled decode gives them too (1/2, 1/4, 1/8 with a partial
// last row and column). The input's first 12 bytes choose the sizes, the denominator and whether
// the image is one flat colour; the rest are the pixels, repeated to fill. Checks: a flat colour
// stays exactly flat (a transparent one: alpha 0 everywhere), and up to 4,096 source pixels every
// channel is within ½ of the area average computed here, in Double, straight from the geometry.
// Built and run by scripts/fuzz.sh.
@testable import Decoding

@_cdecl("LLVMFuzzerTestOneInput")
public func resampleFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let data, count >= 12 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: count)
    func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
    // Sizes: ordinary (up to 400 × 400), or one side very long (up to 100,000) and the other 1–3.
    var (width, height) = (1 + u16(0) % 400, 1 + u16(2) % 400)
    switch bytes[4] % 8 {
    case 0: (width, height) = (1 + (u16(0) << 1 | Int(bytes[2] & 1)) % 100_000, 1 + Int(bytes[3]) % 3)
    case 1: (width, height) = (1 + Int(bytes[3]) % 3, 1 + (u16(0) << 1 | Int(bytes[2] & 1)) % 100_000)
    default: break
    }
    let denominator = [1, 1, 2, 4, 8][Int(bytes[5]) % 5]
    let extentWidth = (width - 1) * denominator + 1 + Int(bytes[6]) % denominator
    let extentHeight = (height - 1) * denominator + 1 + Int(bytes[7]) % denominator
    let outWidth = 1 + u16(8) % width, outHeight = 1 + u16(10) % height
    let flat = bytes[4] & 0x80 != 0
    let payload = bytes.count > 12 ? Array(bytes[12...]) : [0, 0, 0, 0]
    let pixels: [UInt8]
    if flat {
        let color = (0..<4).map { payload[$0 % payload.count] }
        let word = UInt32(color[0]) | UInt32(color[1]) << 8 | UInt32(color[2]) << 16 | UInt32(color[3]) << 24
        pixels = [UInt32](repeating: UInt32(littleEndian: word), count: width * height).withUnsafeBytes { Array($0) }
    } else {
        // The payload repeated, copied a whole payload at a time.
        pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
            var at = 0
            payload.withUnsafeBytes { source in
                while at < buffer.count {
                    let n = min(source.count, buffer.count - at)
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[at..<(at + n)]).copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<n]))
                    at += n
                }
            }
            count = buffer.count
        }
    }
    let scale = (extentWidth, extentHeight, denominator)
    // The result is `ImageBytes` (malloc'd, checked): copied into an array for the checks below.
    guard let resampled = try? ImageDecoder.resample(ImageBytes(pixels), width: width, height: height, to: outWidth, outHeight, codec: nil,
                                                     scaledFrom: scale) else {
        fatalError("resampling \(width)x\(height) (1/\(denominator) of \(extentWidth)x\(extentHeight)) to \(outWidth)x\(outHeight) failed")
    }
    let out = [UInt8](resampled)
    precondition(out.count == outWidth * outHeight * 4)
    if flat {
        let color = Array(pixels[0..<4])
        for i in stride(from: 0, to: out.count, by: 4) {
            precondition(color[3] == 0 ? out[i + 3] == 0 : Array(out[i..<i + 4]) == color,
                         "flat \(color) became \(Array(out[i..<i + 4])) at \(i / 4): \(width)x\(height) to \(outWidth)x\(outHeight), 1/\(denominator)")
        }
    } else if width * height <= 4_096 {
        checkAgainstTheAreaAverage(pixels, width, height, scale, out, outWidth, outHeight)
    }
    return 0
}

/// Each output pixel against the overlap integral of the source pixels it covers, premultiplied.
func checkAgainstTheAreaAverage(_ pixels: [UInt8], _ width: Int, _ height: Int, _ scale: (Int, Int, Int),
                                _ out: [UInt8], _ outWidth: Int, _ outHeight: Int) {
    let (extentWidth, extentHeight, denominator) = scale
    func overlap(_ i: Int, _ o: Int, _ extent: Int, _ count: Int) -> Double {
        let start = Double(i * denominator), end = Double(min((i + 1) * denominator, extent))
        let from = Double(o) * Double(extent) / Double(count), to = Double(o + 1) * Double(extent) / Double(count)
        return max(0, min(end, to) - max(start, from))
    }
    // The source pixels output pixel o may overlap (a margin of one on each side).
    func range(_ o: Int, _ extent: Int, _ count: Int, _ pixels: Int) -> Range<Int> {
        let from = o * extent / count / denominator, to = ((o + 1) * extent + count - 1) / count / denominator + 1
        return max(0, from - 1)..<min(pixels, to + 1)
    }
    for oy in 0..<outHeight {
        for ox in 0..<outWidth {
            var sums = [0.0, 0.0, 0.0, 0.0], total = 0.0
            for y in range(oy, extentHeight, outHeight, height) {
                let wy = overlap(y, oy, extentHeight, outHeight)
                guard wy > 0 else { continue }
                for x in range(ox, extentWidth, outWidth, width) {
                    let w = wy * overlap(x, ox, extentWidth, outWidth)
                    guard w > 0 else { continue }
                    let p = (y * width + x) * 4, a = Double(pixels[p + 3])
                    for c in 0..<3 { sums[c] += w * Double(pixels[p + c]) * a }
                    sums[3] += w * a
                    total += w
                }
            }
            let i = (oy * outWidth + ox) * 4
            let alpha = sums[3] / total
            precondition(abs(Double(out[i + 3]) - alpha) <= 0.5 + 1e-9, "alpha \(out[i + 3]), expected \(alpha)")
            for c in 0..<3 where sums[3] > 0 {
                let expected = sums[c] / sums[3]
                precondition(abs(Double(out[i + c]) - expected) <= 0.5 + 1e-9,
                             "channel \(c) \(out[i + c]), expected \(expected) at (\(ox), \(oy)): \(width)x\(height) to \(outWidth)x\(outHeight)")
            }
        }
    }
}
