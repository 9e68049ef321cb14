/// Small byte strings that start with each image format's signature, padded to a size.
public enum TestImages {
    /// A "PNG" of `size` bytes: the PNG signature, then a pattern that differs per `seed`.
    public static func png(size: Int = 1024, seed: Int = 0) -> [UInt8] {
        pad([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], size: size, seed: seed)
    }

    /// One sample per format, by name.
    public static let samples: [(name: String, bytes: [UInt8])] = [
        ("png", png()),
        ("jpeg", pad([0xFF, 0xD8, 0xFF, 0xE0], size: 512)),
        ("gif", pad(Array("GIF89a".utf8), size: 512)),
        ("webp", pad(Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), size: 512)),
        ("avif", pad([0, 0, 0, 0x1C] + Array("ftypavif".utf8), size: 512)),
        ("heic", pad([0, 0, 0, 0x18] + Array("ftypheic".utf8), size: 512)),
        ("bmp", pad(Array("BM".utf8) + [0x36, 0x02, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0], size: 512)),
        ("tiff", pad([0x49, 0x49, 0x2A, 0x00], size: 512)),
        ("ico", pad([0, 0, 1, 0, 1, 0], size: 512)),
        ("svg", Array("<?xml version=\"1.0\"?>\n<!-- icon -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"></svg>\n".utf8)),
    ]

    static func pad(_ prefix: [UInt8], size: Int, seed: Int = 0) -> [UInt8] {
        var bytes = prefix
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        while bytes.count < size {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return bytes
    }
}
