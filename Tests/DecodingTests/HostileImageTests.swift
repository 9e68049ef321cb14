import Testing
@testable import Decoding

/// Truncated files, corrupt headers, decompression bombs: a typed error, never a crash, a hang or
/// a giant allocation.
@Suite struct HostileImageTests {
    let decoder = ImageDecoder()

    static let formats = ["jpeg", "png", "webp", "gif"]

    @Test(arguments: formats)
    func truncatedFilesAreCorrupt(format: String) throws {
        let source = format == "gif" ? Samples.quadrants(width: 120, height: 90) : Samples.gradient(width: 120, height: 90)
        let bytes = try DecodingTests().encode(source, format)
        for length in [0, 1, 3, 8, 16, 30, bytes.count / 3, bytes.count / 2, bytes.count * 9 / 10] {
            let cut = Array(bytes.prefix(length))
            #expect(throws: DecodingError.self, "\(format) cut at \(length) of \(bytes.count)") {
                _ = try decoder.decode(cut, to: TargetSize(width: 50, height: 50))
            }
            do {
                _ = try decoder.decode(cut)
            } catch {
                #expect(error.kind == .corrupt || error.kind == .unsupportedFormat, "\(error)")
            }
        }
    }

    @Test(arguments: formats)
    func corruptHeadersAreCorrupt(format: String) throws {
        let source = format == "gif" ? Samples.quadrants(width: 40, height: 30) : Samples.gradient(width: 40, height: 30)
        let bytes = try DecodingTests().encode(source, format)
        // Overwrite the header after the signature with garbage, one stretch at a time.
        let signature = format == "webp" ? 12 : format == "png" ? 8 : format == "gif" ? 6 : 2
        for start in stride(from: signature, to: min(bytes.count - 8, signature + 40), by: 6) {
            var damaged = bytes
            for i in start..<(start + 8) { damaged[i] = 0xFF ^ damaged[i] }
            // Either an error or an image of sane size: never a trap.
            if let image = try? decoder.decode(damaged, to: TargetSize(width: 64, height: 64)) {
                #expect(image.width <= 64 && image.height <= 64 && image.pixels.count == image.width * image.height * 4)
            }
        }
        // One known fatal damage per format.
        var damaged = bytes
        switch format {
        case "png": damaged[17] ^= 0x01                                          // IHDR width: its CRC fails
        case "jpeg": damaged[try #require(Self.markerOffset(bytes, 0xC0)) + 4] = 3  // sample precision 3
        case "webp": damaged[12] = 0x58                                          // the first chunk's tag
        default: damaged[try #require(bytes.firstIndex(of: 0x2C))] = 0x00           // the image separator
        }
        let error = try #require(throws: DecodingError.self) { try decoder.decode(damaged) }
        #expect(error.kind == .corrupt, "\(error)")
    }

    @Test func aFiftyThousandSquarePNGHeaderIsRefusedBeforeDecoding() throws {
        let bytes = Self.pngHeader(width: 50_000, height: 50_000)
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes) }
        #expect(error.kind == .tooLarge && error.format == "PNG")
        #expect(error.declaredSize?.width == 50_000 && error.declaredSize?.height == 50_000)
        #expect(clock.now - start < .seconds(1))
        #expect("\(error)".contains("50000x50000"))
    }

    @Test(arguments: [(60_000, 60_000), (65_535, 65_535), (65_535, 16)])
    func aJPEGClaimingAHugeSizeIsRefusedBeforeDecoding(width: Int, height: Int) throws {
        var bytes = try SampleEncoder.jpeg(Samples.gradient(width: 16, height: 16))
        let sof = try #require(Self.markerOffset(bytes, 0xC0))  // SOF0: FF C0, length(2), precision(1), height(2), width(2)
        (bytes[sof + 5], bytes[sof + 6]) = (UInt8(height >> 8), UInt8(height & 0xFF))
        (bytes[sof + 7], bytes[sof + 8]) = (UInt8(width >> 8), UInt8(width & 0xFF))
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes, to: TargetSize(width: 100, height: 100)) }
        #expect(clock.now - start < .seconds(1))
        #expect(error.format == "JPEG")
        if width > 65_500 {
            // libjpeg refuses any side over 65,500 pixels itself, while reading the header.
            #expect(error.kind == .corrupt && error.detail.contains("65500"), "\(error)")
        } else {
            #expect(error.kind == .tooLarge)
            #expect(error.declaredSize?.width == width && error.declaredSize?.height == height)
        }
    }

    @Test func aGIFScreenOf65535SquareIsRefused() throws {
        var bytes = try SampleEncoder.gif(Samples.quadrants(width: 8, height: 8))
        for i in 6...9 { bytes[i] = 0xFF }  // logical screen width and height
        let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes) }
        #expect(error.kind == .tooLarge && error.format == "GIF")
    }

    @Test func aGIFFrameFarLargerThanItsScreenIsRefused() throws {
        var bytes = try SampleEncoder.gif(Samples.quadrants(width: 8, height: 8))
        let descriptor = try #require(bytes.firstIndex(of: 0x2C))  // image separator
        for i in (descriptor + 5)...(descriptor + 8) { bytes[i] = 0xFF }  // frame width and height
        let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes) }
        #expect(error.kind == .corrupt && error.detail.contains("frame much larger"), "\(error)")
    }

    @Test func thePixelLimitIsConfigurableAndCheckedOnTheDeclaredSize() throws {
        let bytes = try PNGEncoder().encode(Samples.gradient(width: 100, height: 100))
        let strict = ImageDecoder(configuration: .init(pixelLimit: 9_999))
        let error = try #require(throws: DecodingError.self) { try strict.decode(bytes, to: TargetSize(width: 10, height: 10)) }
        #expect(error.kind == .tooLarge)
        #expect(try ImageDecoder(configuration: .init(pixelLimit: 10_000)).decode(bytes).width == 100)
        #expect(ImageDecoder().configuration.pixelLimit == 100_000_000)
    }

    @Test func bytesOfNoKnownFormatAreUnsupported() throws {
        for bytes: [UInt8] in [[], [0], Array("<svg></svg>".utf8), [0x42, 0x4D, 0, 0, 0, 0]] {
            let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes) }
            #expect(error.kind == .unsupportedFormat)
        }
    }

    /// A PNG signature and an IHDR chunk (with its real CRC) declaring `width` × `height`, 8-bit
    /// RGBA, then one tiny IDAT and IEND: what a decompression bomb starts with.
    static func pngHeader(width: Int, height: Int) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(data.count) + body + be32(Int(crc32(body)))
        }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
            + chunk("IEND", [])
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// The offset of the first JPEG marker FF `marker` (segments walked by their lengths).
    static func markerOffset(_ bytes: [UInt8], _ marker: UInt8) -> Int? {
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            if bytes[offset + 1] == marker { return offset }
            offset += 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
        }
        return nil
    }
}
