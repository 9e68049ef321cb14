import CImageCodecs
import Foundation
import Testing
import TestSupport
@testable import Decoding

/// The variants of the formats found in the wild: CMYK JPEGs (Photoshop's), JPEGs libjpeg only
/// warns about, and animated WebPs (the first frame is shown).
@Suite struct DecoderVariantTests {
    let decoder = ImageDecoder()

    /// `image` as Adobe CMYK bytes (255 is no ink), the black ink taking the darkest part.
    static func adobeCMYK(_ image: DecodedImage) -> DecodedImage {
        var pixels = Array(image.pixels)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let (r, g, b) = (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
            let light = max(r, g, b)     // 255 − black ink
            pixels[i] = light == 0 ? 0 : UInt8(r * 255 / light)
            pixels[i + 1] = light == 0 ? 0 : UInt8(g * 255 / light)
            pixels[i + 2] = light == 0 ? 0 : UInt8(b * 255 / light)
            pixels[i + 3] = UInt8(light)
        }
        return DecodedImage(width: image.width, height: image.height, bytesPerRow: image.bytesPerRow, pixels: pixels)
    }

    @Test func aCMYKJPEGDecodesToItsRGB() throws {
        let source = Samples.gradient(width: 64, height: 48)
        let jpeg = try SampleEncoder.jpeg(Self.adobeCMYK(source), quality: 95, options: CInt(IMGC_JPEG_CMYK))
        let image = try decoder.decode(jpeg)
        #expect(image.width == 64 && image.height == 48)
        let difference = Samples.difference(image, source)
        #expect(difference.mean < 3, "mean \(difference.mean)")
        #expect(image.pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
        // Scaled while decoding too (1/2), then compared with the reference downsample.
        let small = try decoder.decode(jpeg, to: TargetSize(width: 32, height: 24))
        #expect(Samples.difference(small, Samples.reference(source, width: 32, height: 24)).mean < 3)
    }

    @Test func aCMYKJPEGKeepsFlatColours() throws {
        let source = Samples.quadrants(width: 32, height: 32)
        let image = try decoder.decode(try SampleEncoder.jpeg(Self.adobeCMYK(source), quality: 95, options: CInt(IMGC_JPEG_CMYK)))
        for (x, y, expected) in [(4, 4, (255, 0, 0)), (28, 4, (0, 255, 0)), (4, 28, (0, 0, 255)), (28, 28, (255, 255, 255))] {
            let pixel = image.pixel(x: x, y: y)
            #expect(abs(Int(pixel.r) - expected.0) <= 6 && abs(Int(pixel.g) - expected.1) <= 6 && abs(Int(pixel.b) - expected.2) <= 6,
                    "(\(x), \(y)): \(pixel)")
        }
    }

    /// Bytes that are not a marker before the end marker: libjpeg warns, the image is whole.
    @Test func extraneousBytesBeforeAMarkerAreTolerated() throws {
        let jpeg = try SampleEncoder.jpeg(Samples.gradient(width: 40, height: 30), quality: 90)
        #expect(jpeg.suffix(2) == [0xFF, 0xD9])
        let damaged: [UInt8] = Array(jpeg[..<(jpeg.count - 2)]) + [0x12, 0x34, 0x56, 0xFF, 0xD9]
        let image = try decoder.decode(damaged)
        #expect(image == (try decoder.decode(jpeg)))
    }

    /// A progressive file that ends early shows the scans that arrived (whole, coarser); a
    /// sequential one that ends early stays an error (its last rows would be grey).
    @Test func aProgressiveJPEGEndingEarlyShowsWhatArrived() throws {
        let source = Samples.gradient(width: 64, height: 48)
        let progressive = try SampleEncoder.jpeg(source, quality: 90, options: CInt(IMGC_JPEG_PROGRESSIVE))
        let cut = Array(progressive.prefix(progressive.count * 6 / 10))
        let image = try decoder.decode(cut)
        #expect(image.width == 64 && image.height == 48)
        #expect(Samples.difference(image, source).mean < 12, "mean \(Samples.difference(image, source).mean)")
        let sequential = try SampleEncoder.jpeg(source, quality: 90)
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Array(sequential.prefix(sequential.count * 6 / 10))) }
        #expect(error?.kind == .corrupt)
        let headerOnly = #expect(throws: DecodingError.self) { try decoder.decode(Array(progressive.prefix(200))) }
        #expect(headerOnly?.kind == .corrupt)
    }

    // MARK: - Animated WebP

    /// An animated WebP of `frames` (lossless, each covering the canvas, not blended), built
    /// from still WebPs as the container format says (RIFF: VP8X, ANIM, one ANMF per frame).
    static func animatedWebP(_ frames: [DecodedImage]) throws -> [UInt8] {
        func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
            Array(fourCC.utf8) + le(payload.count, 4) + payload + (payload.count % 2 == 1 ? [0] : [])
        }
        let (width, height) = (frames[0].width, frames[0].height)
        var body = Array("WEBP".utf8)
        body += chunk("VP8X", [0x12, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))   // animation, alpha
        body += chunk("ANIM", [0, 0, 0, 0] + le(0, 2))
        for frame in frames {
            let still = try SampleEncoder.webp(frame)
            #expect(Array(still[12..<16]) == Array("VP8L".utf8))
            let header = le(0, 3) + le(0, 3) + le(width - 1, 3) + le(height - 1, 3) + le(100, 3) + [0x02]   // no blending
            body += chunk("ANMF", header + Array(still[12...]))
        }
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }

    @Test func anAnimatedWebPDecodesItsFirstFrame() throws {
        let first = Samples.gradient(width: 30, height: 20), second = Samples.quadrants(width: 30, height: 20)
        let webp = try Self.animatedWebP([first, second])
        #expect(try decoder.size(of: webp) == (30, 20))
        let image = try decoder.decode(webp)
        #expect(image.width == 30 && image.height == 20)
        #expect(image.pixels == first.pixels)
        let small = try decoder.decode(webp, to: TargetSize(width: 15, height: 15))
        #expect(small.width == 15 && small.height == 10)
        #expect(Samples.difference(small, Samples.reference(first, width: 15, height: 10)).mean < 1.5)
    }

    @Test func aTruncatedAnimatedWebPIsCorrupt() throws {
        let webp = try Self.animatedWebP([Samples.gradient(width: 30, height: 20), Samples.quadrants(width: 30, height: 20)])
        for length in [60, webp.count / 2] {
            let error = #expect(throws: DecodingError.self) { try decoder.decode(Array(webp.prefix(length))) }
            #expect(error?.kind == .corrupt, "\(length) bytes: \(String(describing: error))")
        }
    }

    // MARK: - PNG output

    /// The encoder writes in one pass into libpng's upper bound: noise (incompressible, the worst
    /// case) fits and round-trips, and so does a smooth image.
    @Test(arguments: [3, 401])
    func pngOutputOfNoiseRoundTripsInOnePass(width: Int) throws {
        var generator = SeededGenerator(seed: UInt64(width))
        let pixels = (0..<(width * 97 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let noise = DecodedImage(width: width, height: 97, bytesPerRow: width * 4, pixels: pixels)
        #expect(try decoder.decode(try PNGEncoder().encode(noise)) == noise)
        let smooth = Samples.gradient(width: width, height: 97)
        #expect(try decoder.decode(try PNGEncoder().encode(smooth)) == smooth)
    }

    // MARK: - Files from another encoder (Tests/DecodingFixtures, made by ImageMagick)

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: PackagePaths.root + "/Tests/DecodingFixtures/" + name)))
    }

    /// ImageMagick's CMYK JPEG (Adobe YCCK): the same colours as its RGB source.
    @Test func imageMagicksCMYKJPEGKeepsItsColours() throws {
        let image = try decoder.decode(try Self.fixture("quadrants-cmyk-imagemagick.jpg"))
        #expect(image.width == 32 && image.height == 32)
        for (x, y, expected) in [(4, 4, (255, 0, 0)), (28, 4, (0, 255, 0)), (4, 28, (0, 0, 255)), (28, 28, (255, 255, 255))] {
            let pixel = image.pixel(x: x, y: y)
            #expect(abs(Int(pixel.r) - expected.0) <= 8 && abs(Int(pixel.g) - expected.1) <= 8 && abs(Int(pixel.b) - expected.2) <= 8,
                    "(\(x), \(y)): \(pixel)")
        }
    }

    /// ImageMagick's animated WebP (red, then blue; lossy frames): its first frame, red.
    @Test func imageMagicksAnimatedWebPShowsItsFirstFrame() throws {
        let image = try decoder.decode(try Self.fixture("red-then-blue-animated-imagemagick.webp"))
        #expect(image.width == 20 && image.height == 10)
        #expect((0..<10).allSatisfy { y in (0..<20).allSatisfy { x in
            let pixel = image.pixel(x: x, y: y)
            return pixel.r >= 240 && pixel.g <= 16 && pixel.b <= 16 && pixel.a == 255
        } })
    }
}
