import Support
/// Image formats recognised by their first bytes. A response counts only if it starts with one.
public enum ImageFormat: String, Sendable, CaseIterable {
    /// PNG.
    case png
    /// JPEG.
    case jpeg
    /// GIF (87a and 89a).
    case gif
    /// WebP (RIFF container).
    case webp
    /// AVIF (ISO-BMFF `ftyp` brand avif/avis).
    case avif
    /// HEIC/HEIF (ISO-BMFF `ftyp` brand heic/heix/hevc/hevx/mif1/msf1).
    case heic
    /// Windows bitmap.
    case bmp
    /// TIFF, little- and big-endian.
    case tiff
    /// Windows icon.
    case ico
    /// SVG, recognised by its content: an `<svg` element, after an optional XML declaration,
    /// comments and doctype.
    case svg

    /// The format `bytes` start with, or nil.
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(bytes.prefix(1024))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if ["avif", "avis"].contains(brand) { return .avif }
            if ["heic", "heix", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return .heic }
        }
        if starts(Array("BM".utf8)), head.count >= 14 { return .bmp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts([0x00, 0x00, 0x01, 0x00]), head.count >= 6, head[4] != 0 || head[5] != 0 { return .ico }
        if isSVG(head) { return .svg }
        return nil
    }

    private static func isSVG(_ head: [UInt8]) -> Bool {
        var text = Substring(String(decoding: head, as: UTF8.self))
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        while true {
            text = text.drop { $0.isWhitespace }
            if text.hasPrefix("<svg") { return true }
            let skips: [(String, String)] = [("<?xml", "?>"), ("<!--", "-->"), ("<!DOCTYPE", ">"), ("<!doctype", ">")]
            guard let skip = skips.first(where: { text.hasPrefix($0.0) }),
                  let end = text.endOfFirst(skip.1) else { return false }
            text = text[end...]
        }
    }

    /// A short, printable description of what `bytes` start with, for error messages.
    package static func describeStart(_ bytes: [UInt8]) -> String {
        let head = bytes.prefix(16)
        if head.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            let text = String(decoding: head, as: UTF8.self).replacingNewlines()
            return "\"\(text)\(bytes.count > 16 ? "…" : "")\""
        }
        return head.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: " ")
    }
}

extension Substring {
    /// The index just past the first occurrence of `needle`, or nil.
    func endOfFirst(_ needle: String) -> Index? {
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(needle) { return index(start, offsetBy: needle.count) }
            start = index(after: start)
        }
        return nil
    }
}

extension String {
    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 })
    }
}
