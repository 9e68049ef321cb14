import Foundation
import TestSupport

/// Files carrying an ICC profile the way each format embeds it, built from files the encoders
/// made: JPEG APP2 `ICC_PROFILE` chunks, a PNG `iCCP` chunk (`PNGChunks`), a WebP `ICCP`
/// chunk in an extended (VP8X) file. Also a raw PNG writer (grey, 16-bit) and the fixtures' profiles.
enum ProfiledFiles {
    /// A profile from `Tests/DecodingFixtures/`.
    static func profile(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: PackagePaths.root + "/Tests/DecodingFixtures/" + name)))
    }

    static let displayP3 = "display-p3-lcms.icc"
    static let adobeRGB = "adobe-rgb-compatible-icc-profiles-free.icc"
    static let greyLinear = "gray-linear-icc-profiles-free.icc"

    // MARK: JPEG

    /// One APP2 segment: `ICC_PROFILE\0`, the chunk's number, the count, the bytes.
    static func app2(_ bytes: ArraySlice<UInt8>, number: Int, of count: Int) -> [UInt8] {
        let length = 2 + 12 + 2 + bytes.count
        return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE".utf8) + [0, UInt8(number), UInt8(count)] + bytes
    }

    /// `jpeg` with `profile` in `chunks` APP2 segments right after SOI.
    static func jpeg(_ jpeg: [UInt8], profile: [UInt8], chunks: Int = 1) -> [UInt8] {
        let size = (profile.count + chunks - 1) / chunks
        let segments = (0..<chunks).flatMap { index in
            app2(profile[min(profile.count, index * size)..<min(profile.count, (index + 1) * size)], number: index + 1, of: chunks)
        }
        return Self.jpeg(jpeg, segments: segments)
    }

    /// `jpeg` with `segments` inserted right after SOI.
    static func jpeg(_ jpeg: [UInt8], segments: [UInt8]) -> [UInt8] {
        Array(jpeg.prefix(2)) + segments + jpeg.dropFirst(2)
    }

    // MARK: PNG

    /// `png` with `profile` in an iCCP chunk (and `chunks` before it) after IHDR.
    static func png(_ png: [UInt8], profile: [UInt8], chunks: [UInt8] = []) -> [UInt8] {
        PNGChunks.inserting(chunks + PNGChunks.iccp(profile), into: png)
    }

    /// A PNG written here: `colorType` 0 (grey) or 2 (RGB), `bitDepth` 8 or 16, `samples` the rows'
    /// bytes (big-endian for 16 bits) without filter bytes, `chunks` before the image data.
    static func rawPNG(width: Int, height: Int, colorType: UInt8, bitDepth: UInt8, samples: [UInt8], chunks: [UInt8] = []) -> [UInt8] {
        let rowBytes = samples.count / height
        var filtered: [UInt8] = []
        for y in 0..<height { filtered += [0] + samples[(y * rowBytes)..<((y + 1) * rowBytes)] }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + PNGChunks.chunk("IHDR", PNGChunks.be32(width) + PNGChunks.be32(height) + [bitDepth, colorType, 0, 0, 0])
            + chunks + PNGChunks.chunk("IDAT", PNGChunks.zlib(filtered)) + PNGChunks.chunk("IEND", [])
    }

    // MARK: WebP

    static func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    static func riffChunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        Array(fourCC.utf8) + le(payload.count, 4) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    /// A still WebP (`webp`: RIFF, WEBP, one VP8 or VP8L chunk) made extended: VP8X with the ICC
    /// flag (`flagged`), an ICCP chunk holding `profile` (when not nil), then the image chunk.
    static func webp(_ webp: [UInt8], width: Int, height: Int, profile: [UInt8]?, flagged: Bool = true, alpha: Bool = false) -> [UInt8] {
        let flags: UInt8 = (flagged ? 0x20 : 0) | (alpha ? 0x10 : 0)
        var body = Array("WEBP".utf8) + riffChunk("VP8X", [flags, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))
        if let profile { body += riffChunk("ICCP", profile) }
        body += webp[12...]
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }
}
