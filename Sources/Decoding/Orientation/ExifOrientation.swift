/// The EXIF orientation (tag 0x0112): how the stored pixels must be turned to be shown upright.
/// Read from a JPEG's APP1 `Exif` segment with every offset checked against the bytes.
enum ExifOrientation: Int, Sendable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// True when the shown image is the stored one turned a quarter: width and height swap.
    var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation a JPEG declares; `.up` when it declares none or the EXIF is damaged.
    static func of(jpeg bytes: UnsafeBufferPointer<UInt8>) -> ExifOrientation {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .up }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return .up }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return .up }  // scan data or end: no EXIF before
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return .up }
            let segment = UnsafeBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
            if marker == 0xE1, let orientation = fromExif(segment) { return orientation }
            offset += 2 + length
        }
        return .up
    }

    /// The orientation in an APP1 payload (`Exif\0\0` then a TIFF header and IFD0).
    static func fromExif(_ segment: UnsafeBufferPointer<UInt8>) -> ExifOrientation? {
        let exif: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        guard segment.count >= 14, (0..<6).allSatisfy({ segment[$0] == exif[$0] }) else { return nil }
        let tiff = UnsafeBufferPointer(rebasing: segment[6...])
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            let a = Int(tiff[at]), b = Int(tiff[at + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(little ? at + 2 : at), let low = u16(little ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            guard u16(entry + 2) == 3, let value = u16(entry + 8) else { return nil }
            return ExifOrientation(rawValue: value)
        }
        return nil
    }

    /// The stored pixels (`width` × `height`, tightly packed RGBA8) turned upright, in a buffer
    /// from `memory` (`.outOfMemory` naming the JPEG's `declared` size when it cannot be had);
    /// `.up` returns them as they are.
    func apply(to pixels: ImageBytes, width: Int, height: Int, declared: (width: Int, height: Int)? = nil,
               memory: ImageMemory = .system) throws(DecodingError) -> (pixels: ImageBytes, width: Int, height: Int) {
        if self == .up { return (pixels, width, height) }
        let (outWidth, outHeight) = swapsDimensions ? (height, width) : (width, height)
        let result = try memory.allocation(width * height * 4, for: "the \(outWidth)x\(outHeight) pixels turned upright",
                                           format: "JPEG", size: declared)
        let out = UnsafeMutableRawPointer(result.base)
        pixels.withUnsafeBytes { source in
            for y in 0..<outHeight {
                for x in 0..<outWidth {
                    let (sx, sy): (Int, Int) = switch self {
                    case .up: (x, y)
                    case .upMirrored: (width - 1 - x, y)
                    case .down: (width - 1 - x, height - 1 - y)
                    case .downMirrored: (x, height - 1 - y)
                    case .leftMirrored: (y, x)
                    case .right: (y, height - 1 - x)
                    case .rightMirrored: (width - 1 - y, height - 1 - x)
                    case .left: (width - 1 - y, x)
                    }
                    let word = source.loadUnaligned(fromByteOffset: (sy * width + sx) * 4, as: UInt32.self)
                    out.storeBytes(of: word, toByteOffset: (y * outWidth + x) * 4, as: UInt32.self)
                }
            }
        }
        return (ImageBytes(result), outWidth, outHeight)
    }
}
