import Testing
@testable import Decoding
import Fetch

@Suite struct DecodingTests {
    let decoder = ImageDecoder()

    @Test(arguments: ["png", "webp", "gif"])
    func losslessFormatsDecodeToTheExactPixels(format: String) throws {
        let source = format == "gif" ? Samples.quadrants(width: 37, height: 23) : Samples.gradient(width: 37, height: 23)
        let bytes = try encode(source, format)
        let image = try decoder.decode(bytes)
        #expect(image.width == 37 && image.height == 23 && image.bytesPerRow == 37 * 4)
        #expect(image.pixels == source.pixels)
    }

    @Test func jpegDecodesCloseToItsSource() throws {
        let source = Samples.gradient(width: 64, height: 48)
        let image = try decoder.decode(try SampleEncoder.jpeg(source, quality: 95))
        #expect(image.width == 64 && image.height == 48)
        let difference = Samples.difference(image, source)
        #expect(difference.mean < 2.5, "mean \(difference.mean)")
    }

    @Test func pngKeepsStraightAlpha() throws {
        let source = Samples.gradient(width: 16, height: 16) { x, _ in UInt8(x * 16) }
        let image = try decoder.decode(try PNGEncoder().encode(source))
        #expect(image.pixels == source.pixels)
    }

    /// Each format downsampled to fit a box, against an exact area-average of the source.
    @Test(arguments: [
        ("jpeg", 400, 300, 100, 100, 100, 75),   // TurboJPEG decodes at 1/4: exactly 100x75
        ("jpeg", 400, 300, 150, 150, 150, 113),  // 1/2 then the area average
        ("png", 400, 300, 100, 100, 100, 75),
        ("png", 300, 400, 70, 1000, 70, 93),
        ("webp", 400, 300, 100, 100, 100, 75),   // libwebp scales while decoding
        ("gif", 400, 300, 100, 100, 100, 75),
    ])
    func downsamplesToFitLikeAReference(_ args: (String, Int, Int, Int, Int, Int, Int)) throws {
        let (format, width, height, boxWidth, boxHeight, expectedWidth, expectedHeight) = args
        let source = format == "gif" ? Samples.quadrants(width: width, height: height) : Samples.gradient(width: width, height: height)
        let image = try decoder.decode(try encode(source, format), to: TargetSize(width: boxWidth, height: boxHeight))
        #expect(image.width == expectedWidth && image.height == expectedHeight)
        let difference = Samples.difference(image, Samples.reference(source, width: image.width, height: image.height))
        #expect(difference.mean < 1.5, "mean \(difference.mean)")
        #expect(difference.max < 64, "max \(difference.max)")
    }

    @Test func translucentPixelsAreAveragedPremultiplied() throws {
        // Opaque red beside fully transparent green: the average is half-transparent pure red.
        var source = Samples.gradient(width: 40, height: 40)
        var pixels = Array(source.pixels)
        for y in 0..<40 { for x in 0..<40 {
            let i = (y * 40 + x) * 4
            (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = x.isMultiple(of: 2) ? (255, 0, 0, 255) : (0, 255, 0, 0)
        } }
        source = DecodedImage(width: 40, height: 40, bytesPerRow: 160, pixels: pixels)
        let image = try decoder.decode(try PNGEncoder().encode(source), to: TargetSize(width: 10, height: 10))
        let p = image.pixel(x: 5, y: 5)
        #expect(p.r == 255 && p.g == 0 && p.b == 0 && abs(Int(p.a) - 128) <= 2, "\(p)")
    }

    @Test func fillCoversTheBoxAndNothingIsUpscaled() throws {
        let bytes = try PNGEncoder().encode(Samples.gradient(width: 400, height: 200))
        let filled = try decoder.decode(bytes, to: TargetSize(width: 100, height: 100, contentMode: .fill))
        #expect(filled.width == 200 && filled.height == 100)
        let fitted = try decoder.decode(bytes, to: TargetSize(width: 100, height: 100))
        #expect(fitted.width == 100 && fitted.height == 50)
        let larger = try decoder.decode(bytes, to: TargetSize(width: 4000, height: 4000))
        #expect(larger.width == 400 && larger.height == 200)
        #expect(try decoder.size(of: bytes) == (400, 200))
    }

    /// Where the stored top-left (red), top-right (green), bottom-left (blue) and bottom-right
    /// (white) quadrants are shown, for each EXIF orientation (EXIF 2.32, tag 0x0112).
    @Test(arguments: [
        (1, ["red", "green", "blue", "white"]),
        (2, ["green", "red", "white", "blue"]),
        (3, ["white", "blue", "green", "red"]),
        (4, ["blue", "white", "red", "green"]),
        (5, ["red", "blue", "green", "white"]),
        (6, ["blue", "red", "white", "green"]),
        (7, ["white", "green", "blue", "red"]),
        (8, ["green", "white", "red", "blue"]),
    ])
    func everyExifOrientationIsApplied(_ args: (Int, [String])) throws {
        let (orientation, corners) = args
        let jpeg = try SampleEncoder.jpeg(Samples.quadrants(width: 64, height: 32), quality: 95)
        for bigEndian in [false, true] {
            let bytes = Samples.withOrientation(jpeg, orientation, bigEndian: bigEndian)
            let image = try decoder.decode(bytes)
            let (w, h) = orientation >= 5 ? (32, 64) : (64, 32)
            #expect(image.width == w && image.height == h)
            let found = [(4, 4), (w - 5, 4), (4, h - 5), (w - 5, h - 5)].map { name(image.pixel(x: $0.0, y: $0.1)) }
            #expect(found == corners, "orientation \(orientation)")
            // Fit applies to the upright size: a 16x16 box gives 8x16 for a turned image.
            let small = try decoder.decode(bytes, to: TargetSize(width: 16, height: 16))
            #expect(small.width == (orientation >= 5 ? 8 : 16) && small.height == (orientation >= 5 ? 16 : 8))
        }
    }

    /// `size(of:)` reads the upright size without decoding: a 64×32 JPEG turned a quarter
    /// (orientations 5–8) is 32×64; mirrored or turned half (1–4), 64×32. Both byte orders of EXIF.
    @Test(arguments: 1...8)
    func sizeOfATurnedJPEGSwapsWidthAndHeight(_ orientation: Int) throws {
        let jpeg = try SampleEncoder.jpeg(Samples.quadrants(width: 64, height: 32), quality: 95)
        let upright = orientation >= 5 ? (width: 32, height: 64) : (width: 64, height: 32)
        for bigEndian in [false, true] {
            let bytes = Samples.withOrientation(jpeg, orientation, bigEndian: bigEndian)
            let size = try decoder.size(of: bytes)
            #expect(size == upright, "orientation \(orientation), \(bigEndian ? "big" : "little")-endian EXIF")
            // The size said is the size decoded.
            let image = try decoder.decode(bytes)
            #expect((image.width, image.height) == size)
        }
    }

    @Test func aDamagedExifSegmentMeansUpright() throws {
        let jpeg = try SampleEncoder.jpeg(Samples.quadrants(width: 64, height: 32), quality: 95)
        var bytes = Samples.withOrientation(jpeg, 6)
        bytes[16] = 0xFF  // the IFD offset's high byte: points far past the segment
        bytes[17] = 0xFF
        let image = try decoder.decode(bytes)
        #expect(image.width == 64 && image.height == 32)
    }

    @Test func pngEncodingRoundTrips() throws {
        let source = Samples.gradient(width: 33, height: 17) { x, y in UInt8((x + y) * 5) }
        let png = try PNGEncoder().encode(source)
        #expect(Array(png.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        #expect(try decoder.decode(png).pixels == source.pixels)
    }

    private func name(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> String {
        switch (p.r > 128, p.g > 128, p.b > 128) {
        case (true, false, false): "red"
        case (false, true, false): "green"
        case (false, false, true): "blue"
        case (true, true, true): "white"
        default: "other \(p)"
        }
    }

    func encode(_ image: DecodedImage, _ format: String) throws -> [UInt8] {
        switch format {
        case "jpeg": try SampleEncoder.jpeg(image, quality: 95)
        case "webp": try SampleEncoder.webp(image)
        case "gif": try SampleEncoder.gif(image)
        default: Array(try PNGEncoder().encode(image))
        }
    }
}

/// `ImageDecoder.decodableFormats` is what the decoder really decodes: each listed format's sample
/// decodes, and the standard formats left out are exactly those it has no decoder for.
@Suite struct DecodableFormatsTests {
    @Test func everyListedFormatDecodesAndTheOthersAreNotListed() throws {
        let source = Samples.quadrants(width: 16, height: 8)
        let samples: [ImageFormat: [UInt8]] = [
            .jpeg: try SampleEncoder.jpeg(source, quality: 95), .png: Array(try PNGEncoder().encode(source)),
            .webp: try SampleEncoder.webp(source), .gif: try SampleEncoder.gif(source),
        ]
        #expect(ImageDecoder.decodableFormats == [.webp, .png, .jpeg, .gif])
        for format in ImageDecoder.decodableFormats {
            let bytes = try #require(samples[format], "no sample for \(format)")
            #expect(ImageFormat.sniff(bytes) == format)
            let image = try ImageDecoder().decode(bytes)
            #expect(image.width == 16 && image.height == 8, "\(format)")
        }
        #expect(!ImageDecoder.decodableFormats.contains(.avif) && !ImageDecoder.decodableFormats.contains(.heic))
        #expect(HTTPOptions(acceptedFormats: ImageDecoder.decodableFormats).acceptedFormats == ImageDecoder.decodableFormats)
    }
}
