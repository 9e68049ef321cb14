import Policy

/// The bytes of one entry file, and their checks.
///
/// Layout (little-endian): magic `IMGPC001` (8 bytes), body length (UInt64), body checksum
/// (`Hash128`, 16 bytes), URL length (UInt32), the URL's UTF-8, the body. Every field is untrusted
/// when read: lengths are compared before any conversion, so a damaged file is a miss, never a trap.
enum DiskCacheEntry {
    static let magic: [UInt8] = Array("IMGPC001".utf8)
    static let headerSize = 8 + 8 + 16 + 4
    /// The longest URL an entry holds, in UTF-8 bytes (1 MiB): `store` refuses a longer one
    /// (`DiskCacheError.Code.tooLarge`), so every entry written can be read back.
    static let largestURL = 1 << 20

    /// The entry file for `body` stored under `url`.
    static func encode(body: [UInt8], url: [UInt8]) -> [UInt8] {
        var file: [UInt8] = []
        file.reserveCapacity(headerSize + url.count + body.count)
        file += magic
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { file += $0 }
        let checksum = Hash128(of: body)
        withUnsafeBytes(of: checksum.high.littleEndian) { file += $0 }
        withUnsafeBytes(of: checksum.low.littleEndian) { file += $0 }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: url.count).littleEndian) { file += $0 }
        file += url
        file += body
        return file
    }

    /// The URL length in `header` (the first `headerSize` bytes of a file of `fileSize` bytes), if
    /// the magic is right and the lengths fit the file exactly.
    static func urlLength(header: UnsafeRawBufferPointer, fileSize: Int) -> Int? {
        guard header.count >= headerSize, fileSize >= headerSize, header.prefix(8).elementsEqual(magic) else { return nil }
        let bodyLength = header.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let urlLength = Int(header.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian)
        guard urlLength <= largestURL, urlLength <= fileSize - headerSize else { return nil }
        let rest = fileSize - headerSize - urlLength
        guard bodyLength > 0, bodyLength == UInt64(rest) else { return nil }
        return urlLength
    }

    /// The body in `file` if it is a complete, intact entry for `url`: nil for anything else.
    static func body(of file: [UInt8], for url: ImageURL) -> [UInt8]? {
        file.withUnsafeBytes { raw -> [UInt8]? in
            guard let urlLength = urlLength(header: raw, fileSize: raw.count) else { return nil }
            let checksum = Hash128(high: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
                                   low: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
            let urlBytes = UnsafeRawBufferPointer(rebasing: raw[headerSize..<headerSize + urlLength])
            guard urlBytes.elementsEqual(url.absoluteString.utf8) else { return nil }
            let bodyBytes = UnsafeRawBufferPointer(rebasing: raw[(headerSize + urlLength)...])
            guard Hash128(of: bodyBytes) == checksum else { return nil }
            return Array(bodyBytes)
        }
    }
}
