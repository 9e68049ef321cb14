/// Real images of large declared sizes in a few bytes, written by hand (no encoder holds their
/// pixels): what a memory-limit test decodes without the test itself needing the memory.
///
/// - `greyPNG`: 8-bit grey, every pixel 0; the image data is one fixed-Huffman deflate block of a
///   literal and copies of 258 bytes (about 13 bits per 258 pixels).
/// - `gifScreen`: a logical screen of any size holding one black 1 × 1 frame at (0, 0); the rest is
///   transparent.
/// - `flatWebP`: lossless (VP8L) with one trivial Huffman code per channel: no bit per pixel.
/// - `animatedWebP`: a canvas of any size whose first frame is a 1 × 1 `flatWebP` at an even offset.
public enum LargeImages {
    /// A grey PNG of `width` × `height` zeros (opaque black).
    public static func greyPNG(width: Int, height: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.write(1, count: 1)   // BFINAL
        bits.write(1, count: 2)   // BTYPE 01: fixed Huffman codes
        // Every row is its filter byte (0) and `width` zero samples: all zeros.
        let total = height * (width + 1)
        bits.writeCode(0x30, length: 8)   // literal 0
        var left = total - 1
        while left >= 258 {
            bits.writeCode(0xC5, length: 8)   // length symbol 285: 258 bytes
            bits.writeCode(0, length: 5)      // distance symbol 0: 1 back
            left -= 258
        }
        for _ in 0..<left { bits.writeCode(0x30, length: 8) }
        bits.writeCode(0, length: 7)   // end of block (256)
        // Adler-32 of zeros: a stays 1, b adds 1 per byte.
        let adler = (total % 65_521) << 16 | 1
        let zlib = [0x78, 0x01] + bits.bytes + PNGChunks.be32(adler)
        let header = PNGChunks.be32(width) + PNGChunks.be32(height) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + PNGChunks.chunk("IHDR", header)
            + PNGChunks.chunk("IDAT", zlib) + PNGChunks.chunk("IEND", [])
    }

    /// A GIF whose logical screen is `width` × `height` (each at most 65,535) with one black 1 × 1
    /// frame at its top left corner.
    public static func gifScreen(width: Int, height: Int) -> [UInt8] {
        let screen: [UInt8] = [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0x80, 0, 0]
        let colours: [UInt8] = [0, 0, 0, 255, 255, 255]
        let frame: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]
        // LZW, minimum code size 2, codes of 3 bits: clear (4), index 0, end (5).
        let data: [UInt8] = [2, 2, 0x44, 0x01, 0]
        return Array("GIF89a".utf8) + screen + colours + frame + data + [0x3B]
    }

    /// A lossless WebP of `width` × `height` (each at most 16,384) pixels of one colour (R, G, B, A).
    public static func flatWebP(width: Int, height: Int, color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        riff([chunk("VP8L", vp8l(width: width, height: height, color: color))])
    }

    /// An animated WebP whose canvas is `width` × `height` and whose first frame is one pixel of
    /// `color` at (`x`, `y`) (even: the format stores offsets halved); a second frame, the other
    /// colour, follows (the first frame alone is shown by the decoder).
    public static func animatedWebP(width: Int, height: Int, x: Int, y: Int, color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        func u24(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)] }
        let vp8x = [0x12] + [0, 0, 0] + u24(width - 1) + u24(height - 1)   // animation and alpha
        let anim: [UInt8] = [0, 0, 0, 0, 0, 0]
        func frame(_ x: Int, _ y: Int, _ color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
            chunk("ANMF", u24(x / 2) + u24(y / 2) + u24(0) + u24(0) + u24(100) + [0x02]   // no blending
                  + chunk("VP8L", vp8l(width: 1, height: 1, color: color)))
        }
        let other = (255 - color.0, 255 - color.1, 255 - color.2, UInt8(255))
        return riff([chunk("VP8X", vp8x), chunk("ANIM", anim), frame(x, y, color), frame(0, 0, other)])
    }

    // MARK: - Pieces

    /// A VP8L bitstream: no transform, no colour cache, one Huffman group whose five codes each
    /// have a single symbol (green, red, blue, alpha, distance 0): every pixel takes no bit.
    static func vp8l(width: Int, height: Int, color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        var bits = BitWriter()
        bits.write(0x2F, count: 8)
        bits.write(width - 1, count: 14)
        bits.write(height - 1, count: 14)
        bits.write(color.3 == 255 ? 0 : 1, count: 1)   // alpha is used
        bits.write(0, count: 3)                        // version
        bits.write(0, count: 1)                        // no transform
        bits.write(0, count: 1)                        // no colour cache
        bits.write(0, count: 1)                        // no meta Huffman image
        for symbol in [color.1, color.0, color.2, color.3, 0] {
            bits.write(1, count: 1)   // a simple code
            bits.write(0, count: 1)   // of one symbol
            bits.write(1, count: 1)   // written in 8 bits
            bits.write(Int(symbol), count: 8)
        }
        return bits.bytes + [0, 0, 0, 0]
    }

    static func le32(_ value: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A RIFF chunk, padded to an even size.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        Array(type.utf8) + le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
    }

    static func riff(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = Array("WEBP".utf8) + chunks.joined()
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    /// Bits, least significant first within each byte (deflate's and VP8L's order).
    struct BitWriter {
        var bytes: [UInt8] = []
        private var used = 8

        /// The `count` low bits of `value`, least significant first.
        mutating func write(_ value: Int, count: Int) {
            for i in 0..<count { bit(value >> i & 1) }
        }

        /// A Huffman code of `length` bits, most significant first (deflate's codes).
        mutating func writeCode(_ code: Int, length: Int) {
            for i in stride(from: length - 1, through: 0, by: -1) { bit(code >> i & 1) }
        }

        private mutating func bit(_ value: Int) {
            if used == 8 { bytes.append(0); used = 0 }
            bytes[bytes.count - 1] |= UInt8(value) << used
            used += 1
        }
    }
}
