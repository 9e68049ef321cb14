/// Small byte strings that are whole containers of each image format (its signature, a structure
/// that ends where the format says, padded with a pattern to a size), without pixels to decode:
/// what the fetcher accepts as an image (`ImageFormat.sniff` and `ImageCompleteness`).
public enum TestImages {
    /// A "PNG" of `size` bytes (at least 32): the PNG signature, one private chunk (`imPd`) whose
    /// data is a pattern that differs per `seed`, and the `IEND` chunk.
    public static func png(size: Int = 1024, seed: Int = 0) -> [UInt8] {
        let data = pattern(count: max(0, size - 32), seed: seed)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + PNGChunks.chunk("imPd", data) + PNGChunks.chunk("IEND", [])
    }

    /// A "JPEG" of `size` bytes (at least 10): start of image, application segments (`APP15`)
    /// holding a pattern that differs per `seed`, end of image.
    public static func jpeg(size: Int = 512, seed: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        var remaining = pattern(count: max(0, size - 2 - 2 - 4), seed: seed)[...]
        while !remaining.isEmpty || bytes.count == 2 {
            let take = min(remaining.count, 65_533)
            bytes += [0xFF, 0xEF, UInt8((take + 2) >> 8), UInt8((take + 2) & 0xFF)] + remaining.prefix(take)
            remaining = remaining.dropFirst(take)
            if take == 0 { break }
        }
        return bytes + [0xFF, 0xD9]
    }

    /// A "GIF" of about `size` bytes: header, a screen without colour table, a comment extension
    /// holding a pattern, the trailer.
    public static func gif(size: Int = 512, seed: Int = 0) -> [UInt8] {
        var bytes = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0] + [0x21, 0xFE]
        var remaining = pattern(count: max(0, size - bytes.count - 2), seed: seed)[...]
        while !remaining.isEmpty {
            let take = min(remaining.count, 255)
            bytes += [UInt8(take)] + remaining.prefix(take)
            remaining = remaining.dropFirst(take)
        }
        return bytes + [0, 0x3B]
    }

    /// One sample per format, by name.
    public static let samples: [(name: String, bytes: [UInt8])] = [
        ("png", png()),
        ("jpeg", jpeg()),
        ("gif", gif()),
        ("webp", riff(Array("WEBPVP8 ".utf8), size: 512)),
        ("avif", isoFile(brand: "avif", size: 512)),
        ("heic", isoFile(brand: "heic", size: 512)),
        ("bmp", pad(Array("BM".utf8) + [0x00, 0x02, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0], size: 512)),
        ("tiff", pad([0x49, 0x49, 0x2A, 0x00], size: 512)),
        ("ico", pad([0, 0, 1, 0, 1, 0], size: 512)),
        ("svg", Array("<?xml version=\"1.0\"?>\n<!-- icon -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"></svg>\n".utf8)),
    ]

    /// A RIFF file of `size` bytes whose size field is right: `RIFF`, size, `kind`, a pattern.
    static func riff(_ kind: [UInt8], size: Int) -> [UInt8] {
        let body = kind + pattern(count: max(0, size - 8 - kind.count), seed: 0)
        let declared = UInt32(body.count)
        return Array("RIFF".utf8) + [UInt8(declared & 0xFF), UInt8(declared >> 8 & 0xFF), UInt8(declared >> 16 & 0xFF), UInt8(declared >> 24)] + body
    }

    /// An ISO-BMFF file of `size` bytes (at least 40): an `ftyp` box with `brand`, an empty `meta`
    /// box, then an `mdat` box of a pattern.
    static func isoFile(brand: String, size: Int) -> [UInt8] {
        func box(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let length = data.count + 8
            return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + Array(type.utf8) + data
        }
        let head = box("ftyp", Array(brand.utf8) + [0, 0, 0, 0]) + box("meta", [0, 0, 0, 0])
        return head + box("mdat", pattern(count: max(0, size - head.count - 8), seed: 0))
    }

    static func pad(_ prefix: [UInt8], size: Int, seed: Int = 0) -> [UInt8] {
        prefix + pattern(count: max(0, size - prefix.count), seed: seed)
    }

    /// `count` bytes of a pattern that differs per `seed`.
    public static func pattern(count: Int, seed: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        while bytes.count < count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return bytes
    }
}
