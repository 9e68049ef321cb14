import Support

/// Whether a body holds a whole image of its format, judged from the format's own structure: the
/// second check of a download after its length, for a body whose length the server misstated
/// (a `Content-Length` smaller than the image, a body that ends when the connection closes).
///
/// Walked without decoding a pixel, every length checked against the bytes there are:
/// - PNG: chunks (length, type, data, CRC) up to `IEND`.
/// - JPEG: segments up to the first scan, the entropy-coded data of each scan (skipping stuffed
///   bytes and restart markers), up to the `EOI` marker. Bytes after `EOI` (a phone's motion
///   photo, padding) are allowed.
/// - GIF: the screen descriptor and colour table, then extension and image blocks (their
///   sub-blocks) up to the trailer byte `;`.
/// - WebP: the RIFF size field: the body holds at least the size it declares.
/// - BMP: the file size field of its header, when not zero.
/// - AVIF and HEIC: the top-level ISO-BMFF boxes: each box's declared size lies within the body
///   (a box with size 0 runs to the end), the last one ends where the body does, and the `meta`
///   (the image's description) and `mdat` (its data) boxes are both there.
/// - TIFF, ICO, SVG: not checked (`unchecked`): their structures do not end at a marker (TIFF's
///   directories may sit anywhere), or they are text.
///
/// ```swift
/// if case .incomplete(let detail) = ImageCompleteness.check(body) { /* refuse: FetchError.Code.incompleteImage */ }
/// ```
public enum ImageCompleteness: Sendable, Equatable {
    /// The structure ends within the body.
    case whole
    /// The body ends before the image does: what was missing.
    case incomplete(String)
    /// The format's structure is not checked (or the body is no known format).
    case unchecked

    /// The verdict on `bytes`, by the format they start with.
    public static func check(_ bytes: [UInt8]) -> ImageCompleteness {
        guard let format = ImageFormat.sniff(bytes) else { return .unchecked }
        return bytes.withUnsafeBufferPointer { check($0, as: format) }
    }

    /// The verdict on `bytes` read as `format`.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>, as format: ImageFormat) -> ImageCompleteness {
        switch format {
        case .png: return png(bytes)
        case .jpeg: return jpeg(bytes)
        case .gif: return gif(bytes)
        case .webp: return webp(bytes)
        case .bmp: return bmp(bytes)
        case .avif, .heic: return isoBoxes(bytes)
        case .tiff, .ico, .svg: return .unchecked
        }
    }

    private static func bigEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int) -> Int {
        Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }

    private static func littleEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    private static func png(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = bigEndian32(bytes, offset)
            let isEnd = bytes[offset + 4] == 0x49 && bytes[offset + 5] == 0x45 && bytes[offset + 6] == 0x4E && bytes[offset + 7] == 0x44
            // length (4) + type (4) + data + CRC (4); a length past 2^31 - 1 is no PNG's.
            guard length <= Int(Int32.max) else { return .incomplete("a PNG chunk declares \(length) bytes") }
            let next = offset + 12 + length
            guard next <= bytes.count else { return .incomplete("the PNG ends inside a chunk, before its IEND chunk") }
            if isEnd { return .whole }
            offset = next
        }
        return .incomplete("the PNG ends before its IEND chunk")
    }

    private static func jpeg(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        let missing = ImageCompleteness.incomplete("the JPEG ends before its end-of-image marker")
        var offset = 2
        while true {
            // A marker: one or more 0xFF fill bytes, then its code.
            // Extraneous bytes before a marker (which decoders skip with a warning) are skipped too.
            guard let marker = index(of: 0xFF, in: bytes, from: offset) else { return missing }
            offset = marker
            while offset < bytes.count, bytes[offset] == 0xFF { offset += 1 }
            guard offset < bytes.count else { return missing }
            let code = bytes[offset]
            offset += 1
            switch code {
            case 0xD9:
                return .whole
            case 0xD0...0xD7, 0x01:
                continue  // restart markers and TEM stand alone
            default:
                guard offset + 2 <= bytes.count else { return missing }
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                guard length >= 2 else { return .incomplete("a JPEG segment declares \(length) bytes") }
                offset += length
                guard offset <= bytes.count else { return missing }
                guard code == 0xDA else { continue }
                // Entropy-coded data: up to the next marker that is neither a stuffed 0xFF00 nor a
                // restart marker (fill bytes 0xFF may come before a marker's code).
                while true {
                    guard let found = index(of: 0xFF, in: bytes, from: offset) else { return missing }
                    var marker = found + 1
                    while marker < bytes.count, bytes[marker] == 0xFF { marker += 1 }
                    guard marker < bytes.count else { return missing }
                    if bytes[marker] == 0x00 || (0xD0...0xD7).contains(bytes[marker]) {
                        offset = marker + 1
                        continue
                    }
                    offset = found
                    break
                }
            }
        }
    }

    private static func index(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    private static func gif(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        let missing = ImageCompleteness.incomplete("the GIF ends before its trailer")
        // Header (6) and logical screen descriptor (7).
        guard bytes.count >= 13 else { return missing }
        var offset = 13
        if bytes[10] & 0x80 != 0 { offset += 3 << (Int(bytes[10] & 0x07) + 1) }
        /// Skips data sub-blocks (a length byte, then that many bytes) up to the empty one.
        func skipSubBlocks(_ offset: inout Int) -> Bool {
            while offset < bytes.count {
                let length = Int(bytes[offset])
                offset += 1 + length
                if length == 0 { return true }
            }
            return false
        }
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x3B:
                return .whole
            case 0x21:
                offset += 2  // introducer and label
                guard skipSubBlocks(&offset) else { return missing }
            case 0x2C:
                guard offset + 10 <= bytes.count else { return missing }
                let packed = bytes[offset + 9]
                offset += 10
                if packed & 0x80 != 0 { offset += 3 << (Int(packed & 0x07) + 1) }
                offset += 1  // the LZW minimum code size
                guard skipSubBlocks(&offset) else { return missing }
            default:
                return .incomplete("the GIF has an unknown block (0x\(String(bytes[offset], radix: 16))) before its trailer")
            }
        }
        return missing
    }

    private static func webp(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        guard bytes.count >= 12 else { return .incomplete("the WebP ends inside its RIFF header") }
        let declared = littleEndian32(bytes, 4) + 8
        return bytes.count >= declared ? .whole : .incomplete("the WebP declares \(declared) bytes in its RIFF header")
    }

    private static func bmp(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        guard bytes.count >= 6 else { return .incomplete("the BMP ends inside its header") }
        let declared = littleEndian32(bytes, 2)
        return declared == 0 || bytes.count >= declared ? .whole : .incomplete("the BMP declares \(declared) bytes in its header")
    }

    private static func isoBoxes(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCompleteness {
        var offset = 0
        var found: Set<String> = []
        while offset < bytes.count {
            guard offset + 8 <= bytes.count else { return .incomplete("the file ends inside a box header") }
            var size = bigEndian32(bytes, offset)
            let type = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self)
            if size == 1 {
                guard offset + 16 <= bytes.count else { return .incomplete("the file ends inside a box header") }
                let high = bigEndian32(bytes, offset + 8), low = bigEndian32(bytes, offset + 12)
                guard high < 1 << 31 else { return .incomplete("a box declares more than 2^63 bytes") }
                size = high << 32 | low
                guard size >= 16 else { return .incomplete("a box declares \(size) bytes") }
            } else if size == 0 {
                size = bytes.count - offset  // the last box runs to the end
            } else if size < 8 {
                return .incomplete("a box declares \(size) bytes")
            }
            guard size <= bytes.count - offset else { return .incomplete("the file ends inside its \(type) box of \(size) bytes") }
            found.insert(type)
            offset += size
        }
        // The image's description and its data: a cut at a box boundary leaves one out.
        for needed in ["meta", "mdat"] where !found.contains(needed) { return .incomplete("the file has no \(needed) box") }
        return .whole
    }
}
