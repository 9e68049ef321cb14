/// Pieces of PNG files for tests that write their own: chunks with their CRC, zlib streams of
/// stored (uncompressed) deflate blocks, and an `iCCP` chunk around an ICC profile.
public enum PNGChunks {
    /// `value` as four big-endian bytes.
    public static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A chunk: length, type, data, CRC-32 of type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return be32(data.count) + body + be32(Int(~crc))
    }

    /// A zlib stream of stored deflate blocks holding `bytes`: what any inflater reads.
    public static func zlib(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(bytes.count, start + 65_535), n = end - start
            out += [end == bytes.count ? 1 : 0, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += bytes[start..<end]
            start = end
        } while start < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + be32(Int(b << 16 | a))
    }

    /// An `iCCP` chunk holding `profile` (keyword "ICC profile", compression method 0).
    public static func iccp(_ profile: [UInt8]) -> [UInt8] {
        chunk("iCCP", Array("ICC profile".utf8) + [0, 0] + zlib(profile))
    }

    /// `png` with `chunks` inserted after IHDR (the first chunk: bytes 8 to 33).
    public static func inserting(_ chunks: [UInt8], into png: [UInt8]) -> [UInt8] {
        Array(png.prefix(33)) + chunks + png.dropFirst(33)
    }
}
