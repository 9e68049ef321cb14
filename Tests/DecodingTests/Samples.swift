@testable import Decoding

/// Real images made by the tests: a smooth pattern with known pixels, encoded by the real encoders.
enum Samples {
    /// A smooth image: red grows left to right, green top to bottom, blue a slow wave; opaque.
    static func gradient(width: Int, height: Int, alpha: ((Int, Int) -> UInt8)? = nil) -> DecodedImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(x * 255 / max(1, width - 1))
                pixels[i + 1] = UInt8(y * 255 / max(1, height - 1))
                pixels[i + 2] = UInt8(128 + Int(100 * sin(Double(x + y) / Double(width + height) * 6.28)))
                pixels[i + 3] = alpha?(x, y) ?? 255
            }
        }
        return DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
    }

    /// Four flat quadrants: red (top left), green (top right), blue (bottom left), white (bottom right).
    static func quadrants(width: Int, height: Int) -> DecodedImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let color: (UInt8, UInt8, UInt8) = switch (x < width / 2, y < height / 2) {
                case (true, true): (255, 0, 0)
                case (false, true): (0, 255, 0)
                case (true, false): (0, 0, 255)
                case (false, false): (255, 255, 255)
                }
                (pixels[i], pixels[i + 1], pixels[i + 2]) = color
            }
        }
        return DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
    }

    /// The reference downsample: each output pixel the exact area-weighted mean of the source
    /// pixels it covers (straight alpha weighted by alpha, as premultiplied averaging does). The
    /// overlaps are whole numbers (lengths in units of 1/width and 1/height of a source pixel), so
    /// that a pixel merely touching an output pixel's edge never weighs a rounding error.
    static func reference(_ image: DecodedImage, width: Int, height: Int) -> DecodedImage {
        var out = [UInt8](repeating: 0, count: width * height * 4)
        // Source pixel x covers [x·width, (x+1)·width); output pixel ox covers [ox·W, (ox+1)·W).
        func overlap(_ pixel: Int, _ unit: Int, _ start: Int, _ end: Int) -> Int {
            max(0, min((pixel + 1) * unit, end) - max(pixel * unit, start))
        }
        for oy in 0..<height {
            for ox in 0..<width {
                var sums = [Double](repeating: 0, count: 4)
                var total = 0.0
                let x0 = ox * image.width, x1 = (ox + 1) * image.width, y0 = oy * image.height, y1 = (oy + 1) * image.height
                for y in (y0 / height)..<min(image.height, (y1 + height - 1) / height) {
                    let wy = overlap(y, height, y0, y1)
                    for x in (x0 / width)..<min(image.width, (x1 + width - 1) / width) {
                        let w = Double(wy * overlap(x, width, x0, x1))
                        guard w > 0 else { continue }
                        let p = image.pixel(x: x, y: y)
                        let a = Double(p.a) / 255
                        sums[0] += w * Double(p.r) * a
                        sums[1] += w * Double(p.g) * a
                        sums[2] += w * Double(p.b) * a
                        sums[3] += w * Double(p.a)
                        total += w
                    }
                }
                let i = (oy * width + ox) * 4
                let alpha = sums[3] / total
                out[i + 3] = UInt8(alpha.rounded())
                for c in 0..<3 where alpha > 0 {
                    out[i + c] = UInt8(min(255, (sums[c] / total / (alpha / 255)).rounded()))
                }
            }
        }
        return DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: out)
    }

    /// Mean and largest absolute difference over every channel (alpha included).
    static func difference(_ a: DecodedImage, _ b: DecodedImage) -> (mean: Double, max: Int) {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0, largest = 0
        for y in 0..<a.height {
            for x in 0..<a.width * 4 {
                let d = abs(Int(a.pixels[y * a.bytesPerRow + x]) - Int(b.pixels[y * b.bytesPerRow + x]))
                total += d
                largest = max(largest, d)
            }
        }
        return (Double(total) / Double(a.width * a.height * 4), largest)
    }

    /// `jpeg` with an APP1 EXIF segment declaring `orientation` inserted after SOI (big-endian TIFF
    /// when `bigEndian`).
    static func withOrientation(_ jpeg: [UInt8], _ orientation: Int, bigEndian: Bool = false) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        tiff += u16(42) + u32(8)
        tiff += u16(2)                                              // two entries in IFD0
        tiff += u16(0x010F) + u16(2) + u32(4) + Array("cam\0".utf8)  // Make, ASCII, 4 bytes inline
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
        tiff += u32(0)                                              // no next IFD
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + jpeg.dropFirst(2)
    }
}

import Foundation
