import Policy
import HTTPSemantics
import Support

/// The bytes of one partial body file (`partial/<32 hex>`): what a cancelled or failed transfer
/// received, kept so that the next request asks only for the rest (`Range` with `If-Range`).
///
/// Layout (little-endian): a header, then chunks appended as data arrives.
/// - Header: magic `IMGPP001` (8 bytes), the full body's length (UInt64), the validator's length
///   (UInt16), the URL's length (UInt32), a check (UInt64) over these fields, the validator and
///   the URL; then the validator (a strong `ETag`, or a `Last-Modified` date) and the URL.
/// - Chunk: its length (UInt32, 1 to 1 MiB), a check (UInt64) over its offset in the body, its
///   length and its bytes, then the bytes.
///
/// Every byte is untrusted when read: a damaged header, another URL's file or a first chunk that
/// fails its check is no partial at all (the file is discarded); chunks are taken in order up to
/// the first one that is short or fails its check (a write torn by a crash), and that tail is
/// never served (it is cut off at the next append).
enum DiskCachePartialFile {
    static let magic: [UInt8] = Array("IMGPP001".utf8)
    static let fixedHeaderSize = 8 + 8 + 2 + 4 + 8
    static let chunkHeaderSize = 4 + 8
    /// The largest chunk written or read.
    static let largestChunk = 1 << 20
    /// The longest validator kept.
    static let longestValidator = 1024

    /// What an intact partial file holds.
    struct Contents {
        var totalLength: Int
        var validator: String
        /// The body's first bytes: every chunk that passed its check, in order.
        var body: [UInt8]
        /// Where the last good chunk ends in the file (appends go there).
        var end: Int
        /// Whether bytes after `end` were cut off (a torn or damaged chunk).
        var torn: Bool
    }

    /// The header of a partial body of `totalLength` bytes for `url`, checked with `validator`.
    static func header(totalLength: Int, validator: [UInt8], url: [UInt8]) -> [UInt8] {
        var bytes = magic
        DiskCacheEntry.append(UInt64(max(0, totalLength)), to: &bytes)
        DiskCacheEntry.append(UInt16(truncatingIfNeeded: validator.count), to: &bytes)
        DiskCacheEntry.append(UInt32(truncatingIfNeeded: url.count), to: &bytes)
        let check = Self.check(bytes + validator + url)
        DiskCacheEntry.append(check, to: &bytes)
        return bytes + validator + url
    }

    /// `bytes` as chunks starting at `offset` in the body.
    static func chunks(_ bytes: ArraySlice<UInt8>, offset: Int) -> [UInt8] {
        var file: [UInt8] = []
        file.reserveCapacity(bytes.count + (bytes.count / largestChunk + 1) * chunkHeaderSize)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = min(start + largestChunk, bytes.endIndex)
            let piece = bytes[start..<end]
            DiskCacheEntry.append(UInt32(piece.count), to: &file)
            DiskCacheEntry.append(chunkCheck(offset: offset + (start - bytes.startIndex), piece), to: &file)
            file += piece
            start = end
        }
        return file
    }

    /// The contents of `file` if it is a partial body for `url`; nil for anything else.
    static func contents(of file: [UInt8], for url: [UInt8]) -> Contents? {
        file.withUnsafeBytes { raw -> Contents? in
            guard raw.count >= fixedHeaderSize, raw.prefix(8).elementsEqual(magic) else { return nil }
            let total = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            let validatorLength = Int(raw.loadUnaligned(fromByteOffset: 16, as: UInt16.self).littleEndian)
            let urlLength = Int(raw.loadUnaligned(fromByteOffset: 18, as: UInt32.self).littleEndian)
            let check = raw.loadUnaligned(fromByteOffset: 22, as: UInt64.self).littleEndian
            guard total > 0, total < 1 << 40, validatorLength > 0, validatorLength <= longestValidator, urlLength == url.count,
                  raw.count >= fixedHeaderSize + validatorLength + urlLength else { return nil }
            let validator = Array(raw[fixedHeaderSize..<fixedHeaderSize + validatorLength])
            let storedURL = raw[(fixedHeaderSize + validatorLength)..<(fixedHeaderSize + validatorLength + urlLength)]
            guard storedURL.elementsEqual(url),
                  check == Self.check(Array(raw[0..<22]) + validator + url) else { return nil }
            var position = fixedHeaderSize + validatorLength + urlLength
            var body: [UInt8] = []
            while raw.count - position >= chunkHeaderSize {
                let length = Int(raw.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian)
                let chunkCheck = raw.loadUnaligned(fromByteOffset: position + 4, as: UInt64.self).littleEndian
                guard length > 0, length <= largestChunk, raw.count - position - chunkHeaderSize >= length,
                      body.count + length <= Int(total) else { break }
                let piece = raw[(position + chunkHeaderSize)..<(position + chunkHeaderSize + length)]
                guard chunkCheck == Self.chunkCheck(offset: body.count, piece) else { break }
                body += piece
                position += chunkHeaderSize + length
            }
            guard !body.isEmpty else { return nil }
            return Contents(totalLength: Int(total), validator: String(decoding: validator, as: UTF8.self), body: body,
                            end: position, torn: position != raw.count)
        }
    }

    private static func check(_ bytes: [UInt8]) -> UInt64 {
        let hash = Hash128(of: bytes)
        return hash.high ^ hash.low.rotatedLeft(29)
    }

    private static func chunkCheck(offset: Int, _ piece: some Collection<UInt8>) -> UInt64 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(12 + piece.count)
        DiskCacheEntry.append(UInt64(offset), to: &bytes)
        DiskCacheEntry.append(UInt32(piece.count), to: &bytes)
        bytes += piece
        return check(bytes)
    }
}
