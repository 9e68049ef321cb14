import CImageCodecs
import Foundation
import InMemoryLogging
import Logging
import Testing
import TestSupport
@testable import Decoding

/// Embedded ICC profiles are converted to sRGB (issue 16, "Wrong pixels" 2): real profiles (Display
/// P3 and a CMYK made with Little CMS, Adobe RGB and a linear grey from Debian's icc-profiles-free) embedded
/// in JPEG, PNG and WebP files, against the conversion computed in `ColorReference`; damaged
/// profiles are ignored (and logged), never a crash.
@Suite struct ColorProfileTests {
    let decoder = ImageDecoder()
    /// The same decoder, taking every file's values as sRGB: what the file holds, unconverted.
    let untagged = ImageDecoder(configuration: .init(appliesColorProfiles: false))

    /// Colour patches, 16 × 16 each (whole JPEG blocks, so that their centres survive 4:2:0):
    /// mid-tones a wide-gamut profile moves by up to about 25/255, and a grey.
    static let patches: [(Int, Int, Int)] = [
        (200, 100, 50), (50, 150, 220), (120, 200, 80), (230, 60, 160), (90, 90, 90), (240, 220, 40), (60, 60, 200), (180, 40, 40),
    ]

    /// The patches in a 4 × 2 grid (64 × 32), with `alpha` everywhere.
    static func patchImage(alpha: UInt8 = 255) -> DecodedImage {
        var pixels = [UInt8](repeating: alpha, count: 64 * 32 * 4)
        for y in 0..<32 {
            for x in 0..<64 {
                let patch = patches[(y / 16) * 4 + x / 16], i = (y * 64 + x) * 4
                (pixels[i], pixels[i + 1], pixels[i + 2]) = (UInt8(patch.0), UInt8(patch.1), UInt8(patch.2))
            }
        }
        return DecodedImage(width: 64, height: 32, bytesPerRow: 256, pixels: pixels)
    }

    /// Each patch's centre pixel.
    static func centres(_ image: DecodedImage) -> [(r: UInt8, g: UInt8, b: UInt8, a: UInt8)] {
        (0..<patches.count).map { image.pixel(x: (($0 % 4) * 16) + 8, y: ($0 / 4) * 16 + 8) }
    }

    /// The patch image in `format`, with `profile` embedded (nil: none).
    static func file(_ format: String, profile: [UInt8]?, alpha: UInt8 = 255) throws -> [UInt8] {
        let image = patchImage(alpha: alpha)
        switch format {
        case "jpeg":
            let jpeg = try SampleEncoder.jpeg(image, quality: 98)
            return profile.map { ProfiledFiles.jpeg(jpeg, profile: $0) } ?? jpeg
        case "webp":
            let webp = try SampleEncoder.webp(image)
            return profile.map { ProfiledFiles.webp(webp, width: 64, height: 32, profile: $0, alpha: alpha != 255) } ?? webp
        default:
            let png = Array(try PNGEncoder().encode(image))
            return profile.map { ProfiledFiles.png(png, profile: $0) } ?? png
        }
    }

    static func space(_ profile: String) -> ColorReference.Space {
        profile == ProfiledFiles.adobeRGB ? ColorReference.adobeRGB : ColorReference.displayP3
    }

    @Test(arguments: ["jpeg", "png", "webp"], [ProfiledFiles.displayP3, ProfiledFiles.adobeRGB])
    func anEmbeddedProfileIsConvertedToSRGB(format: String, profile: String) throws {
        let bytes = try Self.file(format, profile: try ProfiledFiles.profile(profile), alpha: format == "jpeg" ? 255 : 200)
        let values = Self.centres(try untagged.decode(bytes))   // what the file holds
        let converted = Self.centres(try decoder.decode(bytes))
        var largestShift = 0.0
        for (value, result) in zip(values, converted) {
            let expected = ColorReference.convert((Int(value.r), Int(value.g), Int(value.b)), from: Self.space(profile))
            let errors = [Double(result.r) - expected.0, Double(result.g) - expected.1, Double(result.b) - expected.2].map(abs)
            #expect(errors.allSatisfy { $0 <= 3 }, "\(format) \(profile): \(value) became \(result), expected \(expected)")
            #expect(result.a == value.a, "alpha kept")
            largestShift = max(largestShift, abs(expected.0 - Double(value.r)), abs(expected.1 - Double(value.g)), abs(expected.2 - Double(value.b)))
        }
        // The profile matters: ignoring it would be off by this much (so this test can fail).
        #expect(largestShift >= 10, "largest shift \(largestShift)")
    }

    /// ImageMagick's files with a Display P3 profile (another encoder's APP2, iCCP beside a cHRM
    /// in a palette PNG, and VP8X/ICCP): P3 (200, 100, 50) comes out as sRGB (215, 93, 31).
    @Test(arguments: ["jpg", "png", "webp"])
    func imageMagicksProfiledFilesAreConverted(format: String) throws {
        let bytes = try ProfiledFiles.profile("orange-p3-imagemagick." + format)
        let value = try untagged.decode(bytes).pixel(x: 16, y: 8), p = try decoder.decode(bytes).pixel(x: 16, y: 8)
        #expect(abs(Int(value.r) - 200) <= 2 && abs(Int(value.g) - 100) <= 2 && abs(Int(value.b) - 50) <= 2, "the file holds \(value)")
        let expected = ColorReference.convert((Int(value.r), Int(value.g), Int(value.b)), from: ColorReference.displayP3)
        #expect(abs(Double(p.r) - expected.0) <= 3 && abs(Double(p.g) - expected.1) <= 3 && abs(Double(p.b) - expected.2) <= 3 && p.a == 255,
                "\(format): \(p), expected \(expected)")
    }

    /// Without a profile nothing changes: the lossless formats give their pixels back, a JPEG the
    /// same as with profiles off; scaled too (the conversion runs at the decoded size).
    @Test(arguments: ["jpeg", "png", "webp", "gif"])
    func anImageWithoutAProfileIsUnchanged(format: String) throws {
        let source = Self.patchImage()
        let bytes = format == "gif" ? try SampleEncoder.gif(source) : try Self.file(format, profile: nil)
        let image = try decoder.decode(bytes)
        #expect(image == (try untagged.decode(bytes)))
        if format != "jpeg" { #expect(image == source) }
        #expect(try decoder.decode(bytes, to: TargetSize(width: 16, height: 16)) == (try untagged.decode(bytes, to: TargetSize(width: 16, height: 16))))
    }

    /// A scaled decode is converted too, before the area average: the 8 × 4 result (8 × 8 of one
    /// flat patch each) is, within 3/255, the area average of the full-size untagged decode with
    /// each pixel converted by the independent reference (`ColorReference`). A JPEG this small is
    /// decoded at full size (see `ImageDecoder`), so its chroma's blend across patch borders is
    /// converted pixel by pixel, then averaged, as the reference does.
    @Test(arguments: ["jpeg", "png", "webp"])
    func aScaledDecodeIsConvertedToo(format: String) throws {
        let bytes = try Self.file(format, profile: try ProfiledFiles.profile(ProfiledFiles.displayP3))
        let small = try decoder.decode(bytes, to: TargetSize(width: 8, height: 8))
        let full = try untagged.decode(bytes)
        var pixels: [UInt8] = []
        for y in 0..<full.height { for x in 0..<full.width {
            let value = full.pixel(x: x, y: y)
            let c = ColorReference.convert((Int(value.r), Int(value.g), Int(value.b)), from: ColorReference.displayP3)
            pixels += [c.0, c.1, c.2].map { UInt8(max(0, min(255, $0.rounded()))) } + [value.a]
        } }
        let converted = DecodedImage(width: full.width, height: full.height, bytesPerRow: full.width * 4, pixels: pixels)
        let expected = Samples.reference(converted, width: 8, height: 4)
        #expect(small.width == 8 && small.height == 4)
        for y in 0..<4 { for x in 0..<8 {
            let e = expected.pixel(x: x, y: y), p = small.pixel(x: x, y: y)
            #expect(abs(Int(p.r) - Int(e.r)) <= 3 && abs(Int(p.g) - Int(e.g)) <= 3 && abs(Int(p.b) - Int(e.b)) <= 3,
                    "\(format) (\(x), \(y)): became \(p), expected \(e)")
        } }
    }

    /// A grey image with a grey profile (icc-profiles-free's `Gray.icc`: linear light, gamma 1.0):
    /// value v is v/255 of linear light, which sRGB encodes far lighter (128 → 188).
    @Test(arguments: ["jpeg", "png"])
    func aGreyProfileConvertsGreyPixels(format: String) throws {
        let levels = [0, 16, 48, 96, 128, 160, 208, 255]
        var rgba = [UInt8](repeating: 255, count: 128 * 16 * 4), grey = [UInt8](repeating: 0, count: 128 * 16)
        for y in 0..<16 { for x in 0..<128 {
            let v = UInt8(levels[x / 16])
            grey[y * 128 + x] = v
            (rgba[(y * 128 + x) * 4], rgba[(y * 128 + x) * 4 + 1], rgba[(y * 128 + x) * 4 + 2]) = (v, v, v)
        } }
        let profile = try ProfiledFiles.profile(ProfiledFiles.greyLinear)
        let bytes = format == "jpeg"
            ? ProfiledFiles.jpeg(try SampleEncoder.jpeg(DecodedImage(width: 128, height: 16, bytesPerRow: 512, pixels: rgba), quality: 98,
                                                        options: CInt(IMGC_JPEG_GRAY)), profile: profile)
            : ProfiledFiles.rawPNG(width: 128, height: 16, colorType: 0, bitDepth: 8, samples: grey, chunks: PNGChunks.iccp(profile))
        let values = try untagged.decode(bytes), image = try decoder.decode(bytes)
        for (index, level) in levels.enumerated() {
            let value = values.pixel(x: index * 16 + 8, y: 8), p = image.pixel(x: index * 16 + 8, y: 8)
            #expect(abs(Int(value.r) - level) <= 1, "the file holds \(value) for \(level)")
            let expected = ColorReference.srgb8(linear: Double(value.r) / 255)
            #expect([p.r, p.g, p.b].allSatisfy { abs(Double($0) - expected) <= 3 } && p.a == 255, "\(level): \(p), expected \(expected)")
        }
    }

    /// Every grey value through the linear grey profile, against the exact curve: within 1/255
    /// everywhere, the shadows too. Little CMS's default 8-bit optimisation missed by up to 9.7/255
    /// there (2 came out 12, exactly 21.7; 1 → 6 for 12.7): grey transforms are built unoptimised
    /// (`cmsFLAGS_NOOPTIMIZE`). PNG (the file's values exactly) and a grey JPEG (against the values
    /// it decodes to unconverted).
    @Test(arguments: ["png", "jpeg"])
    func aLinearGreyProfileIsExactInTheShadows(format: String) throws {
        // 256 columns, one per value, 16 rows (whole JPEG blocks hold 8 values each: the JPEG's
        // values drift, which is why its reference is what it decodes to unconverted).
        var rgba = [UInt8](repeating: 255, count: 256 * 16 * 4), grey = [UInt8](repeating: 0, count: 256 * 16)
        for y in 0..<16 { for x in 0..<256 {
            grey[y * 256 + x] = UInt8(x)
            (rgba[(y * 256 + x) * 4], rgba[(y * 256 + x) * 4 + 1], rgba[(y * 256 + x) * 4 + 2]) = (UInt8(x), UInt8(x), UInt8(x))
        } }
        let profile = try ProfiledFiles.profile(ProfiledFiles.greyLinear)
        let bytes = format == "jpeg"
            ? ProfiledFiles.jpeg(try SampleEncoder.jpeg(DecodedImage(width: 256, height: 16, bytesPerRow: 1_024, pixels: rgba), quality: 100,
                                                        options: CInt(IMGC_JPEG_GRAY)), profile: profile)
            : ProfiledFiles.rawPNG(width: 256, height: 16, colorType: 0, bitDepth: 8, samples: grey, chunks: PNGChunks.iccp(profile))
        let values = try untagged.decode(bytes), image = try decoder.decode(bytes)
        var worst = (error: 0.0, value: 0)
        for y in [0, 7, 15] { for x in 0..<256 {
            let value = values.pixel(x: x, y: y), p = image.pixel(x: x, y: y)
            if format == "png" { #expect(Int(value.r) == x, "the file holds \(value) at \(x)") }
            let expected = ColorReference.srgb8(linear: Double(value.r) / 255)
            let error = [p.r, p.g, p.b].map { abs(Double($0) - expected) }.max()!
            if error > worst.error { worst = (error, Int(value.r)) }
            #expect(error <= 1 && p.a == 255, "\(format) (\(x), \(y)): \(value.r) became \(p), expected \(expected)")
        } }
        // The shadows the optimised transform got wrong, by value.
        if format == "png" {
            for (value, exact) in [(1, 12.7), (2, 21.7), (3, 28.2), (4, 33.6)] {
                #expect(abs(Double(image.pixel(x: value, y: 0).r) - exact) <= 1, "\(value) became \(image.pixel(x: value, y: 0))")
            }
        }
        #expect(worst.error <= 1, "worst \(worst)")
    }

    /// A PNG may carry one iCCP chunk; a file with two uses the **first**, as libpng does (it
    /// ignores the repeat with a warning), whichever profiles they hold: Display P3 then Adobe RGB
    /// converts as Display P3, the reverse as Adobe RGB. (A damaged first one makes the profile
    /// ignored; the second is never consulted.)
    @Test(arguments: [(ProfiledFiles.displayP3, ProfiledFiles.adobeRGB), (ProfiledFiles.adobeRGB, ProfiledFiles.displayP3)])
    func aPNGWithTwoICCPChunksUsesTheFirst(_ order: (String, String)) throws {
        let (first, second) = order
        let png = Array(try PNGEncoder().encode(Self.patchImage()))
        let bytes = PNGChunks.inserting(PNGChunks.iccp(try ProfiledFiles.profile(first)) + PNGChunks.iccp(try ProfiledFiles.profile(second)), into: png)
        let values = Self.centres(try untagged.decode(bytes))
        let converted = Self.centres(try decoder.decode(bytes))
        var apart = 0.0   // how far the two profiles' conversions are: the test can tell them apart
        for (value, result) in zip(values, converted) {
            let rgb = (Int(value.r), Int(value.g), Int(value.b))
            let expected = ColorReference.convert(rgb, from: Self.space(first)), other = ColorReference.convert(rgb, from: Self.space(second))
            let errors = [Double(result.r) - expected.0, Double(result.g) - expected.1, Double(result.b) - expected.2].map(abs)
            #expect(errors.allSatisfy { $0 <= 3 }, "\(first) then \(second): \(value) became \(result), expected \(expected) (the second: \(other))")
            apart = max(apart, abs(expected.0 - other.0), abs(expected.1 - other.1), abs(expected.2 - other.2))
        }
        #expect(apart >= 10, "the two profiles convert alike (\(apart)): the test could not tell")
    }

    /// PNG: an iCCP profile replaces gAMA, cHRM and sRGB (the specification's order): a file with
    /// gAMA 1.0 (and cHRM) and a Display P3 profile decodes as with the profile alone, never
    /// converted twice; with gAMA alone, libpng's simplified API converts gamma 1.0 to its sRGB
    /// (a 2.2 power) as browsers do; with sRGB and gAMA, sRGB wins (libpng ignores a gAMA that
    /// contradicts it).
    @Test func anICCPProfileWinsOverGAMAAndNothingIsConvertedTwice() throws {
        let rgb = Self.patchImage().pixels.enumerated().filter { $0.offset % 4 != 3 }.map(\.element)
        func png(_ chunks: [UInt8]) -> [UInt8] { ProfiledFiles.rawPNG(width: 64, height: 32, colorType: 2, bitDepth: 8, samples: rgb, chunks: chunks) }
        let p3 = PNGChunks.iccp(try ProfiledFiles.profile(ProfiledFiles.displayP3))
        let gamma = PNGChunks.chunk("gAMA", PNGChunks.be32(100_000))   // gamma 1.0: linear values
        let chrm = PNGChunks.chunk("cHRM", [31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000].flatMap { PNGChunks.be32($0) })
        let srgb = PNGChunks.chunk("sRGB", [0])
        let profileOnly = try decoder.decode(png(p3))
        #expect(profileOnly != (try untagged.decode(png(p3))))
        #expect(try decoder.decode(png(gamma + chrm + p3)) == profileOnly)
        #expect(try decoder.decode(png(srgb + p3)) == profileOnly)
        #expect(try decoder.decode(png(srgb + gamma)) == Self.patchImage())
        #expect(try untagged.decode(png(gamma + p3)) == (try untagged.decode(png(gamma))), "profiles off: gAMA applies")
        let gammaOnly = Self.centres(try decoder.decode(png(gamma)))
        for (patch, result) in zip(Self.patches, gammaOnly) {
            // libpng encodes its "sRGB" output with a plain 1/2.2 power, not sRGB's piecewise curve.
            let expected = [patch.0, patch.1, patch.2].map { 255 * pow(Double($0) / 255, 1 / 2.2) }
            #expect(zip([result.r, result.g, result.b], expected).allSatisfy { abs(Double($0) - $1) <= 1 }, "\(patch): \(result)")
        }
    }

    /// A 16-bit PNG without gAMA or sRGB holds sRGB values, as browsers take them (libpng's
    /// simplified API took them as linear light and brightened them: 0x8080 came out 188).
    @Test func aSixteenBitPNGWithoutGammaIsTakenAsSRGB() throws {
        let values: [UInt16] = [0, 0x1010, 0x4040, 0x8080, 0xC0C0, 0xFFFF]
        let samples = values.flatMap { v in [UInt8(v >> 8), UInt8(v & 0xFF), UInt8(v >> 8), UInt8(v & 0xFF), UInt8(v >> 8), UInt8(v & 0xFF)] }
        let image = try decoder.decode(ProfiledFiles.rawPNG(width: values.count, height: 1, colorType: 2, bitDepth: 16, samples: samples))
        #expect((0..<values.count).map { image.pixel(x: $0, y: 0).r } == values.map { UInt8($0 >> 8) })
    }

    /// A profile split into many APP2 chunks (up to 255, even out of order in the file) is put
    /// back together in sequence order.
    @Test(arguments: [2, 7, 255])
    func aProfileInManyChunksIsReassembled(chunks: Int) throws {
        let p3 = try ProfiledFiles.profile(ProfiledFiles.displayP3)
        let jpeg = try SampleEncoder.jpeg(Self.patchImage(), quality: 98)
        let expected = try decoder.decode(ProfiledFiles.jpeg(jpeg, profile: p3))
        #expect(expected != (try untagged.decode(ProfiledFiles.jpeg(jpeg, profile: p3))))
        #expect(try decoder.decode(ProfiledFiles.jpeg(jpeg, profile: p3, chunks: chunks)) == expected)
        // The same chunks in reverse order.
        let size = (p3.count + chunks - 1) / chunks
        var reversed: [UInt8] = []
        for index in (0..<chunks).reversed() {
            let start = min(p3.count, index * size), end = min(p3.count, (index + 1) * size)
            reversed += ProfiledFiles.app2(p3[start..<end], number: index + 1, of: chunks)
        }
        #expect(try decoder.decode(ProfiledFiles.jpeg(jpeg, segments: reversed)) == expected)
    }

    /// The ink model of `cmyk-inks-lcms.icc` (`make-cmyk.c`): each ink's fraction multiplies the
    /// linear-light reflectance of red, green and blue by (1 − ink × absorption).
    static func cmykInks(_ inks: [Double]) -> [Double] {
        let absorption = [[0.95, 0.25, 0.05], [0.10, 0.90, 0.15], [0.02, 0.05, 0.90], [0.90, 0.90, 0.90]]
        return (0..<3).map { c in (0..<4).reduce(1.0) { $0 * (1 - inks[$1] * absorption[$1][c]) } }
    }

    /// A CMYK JPEG (Adobe-inverted, as Photoshop writes it) with a CMYK profile is converted
    /// through the profile, not the naive formula: each patch (inks on the profile's grid, in
    /// fifths) within 4/255 of the ink model, which the naive formula misses by far.
    @Test func aCMYKJPEGWithAProfileIsConvertedThroughIt() throws {
        let inks: [[Int]] = [[5, 0, 0, 0], [0, 5, 0, 0], [0, 0, 5, 0], [0, 0, 0, 3], [2, 1, 0, 0], [0, 3, 4, 1], [1, 1, 1, 1], [0, 0, 0, 0]]
        var pixels = [UInt8](repeating: 0, count: 64 * 32 * 4)
        for y in 0..<32 { for x in 0..<64 {
            let patch = inks[(y / 16) * 4 + x / 16]
            for c in 0..<4 { pixels[(y * 64 + x) * 4 + c] = UInt8(255 - patch[c] * 51) }   // 255: no ink
        } }
        let cmyk = try SampleEncoder.jpeg(DecodedImage(width: 64, height: 32, bytesPerRow: 256, pixels: pixels), quality: 100,
                                          options: CInt(IMGC_JPEG_CMYK))
        let bytes = ProfiledFiles.jpeg(cmyk, profile: try ProfiledFiles.profile("cmyk-inks-lcms.icc"))
        let converted = Self.centres(try decoder.decode(bytes)), naive = Self.centres(try untagged.decode(bytes))
        var largestMiss = 0.0
        for (index, patch) in inks.enumerated() {
            let expected = Self.cmykInks(patch.map { Double($0) / 5 }).map { ColorReference.srgb8(linear: $0) }
            let result = [converted[index].r, converted[index].g, converted[index].b].map(Double.init)
            #expect(zip(result, expected).allSatisfy { abs($0 - $1) <= 4 } && converted[index].a == 255, "inks \(patch): \(result), expected \(expected)")
            let plain = [naive[index].r, naive[index].g, naive[index].b].map(Double.init)
            largestMiss = max(largestMiss, zip(plain, expected).map { abs($0 - $1) }.max() ?? 0)
        }
        #expect(largestMiss >= 30, "the naive formula misses the model by \(largestMiss)")
    }

    // MARK: - Hostile profiles

    /// A profile whose header claims 4 GB is read as far as its bytes go (Little CMS takes the
    /// smaller of the two): applied like the intact profile.
    @Test func aProfileHeaderClaimingFourGigabytesIsReadAsFarAsItsBytesGo() throws {
        var p3 = try ProfiledFiles.profile(ProfiledFiles.displayP3)
        let jpeg = try SampleEncoder.jpeg(Self.patchImage(), quality: 98)
        let intact = try decoder.decode(ProfiledFiles.jpeg(jpeg, profile: p3))
        (p3[0], p3[1], p3[2], p3[3]) = (0xFF, 0xFF, 0xFF, 0xF0)
        #expect(try decoder.decode(ProfiledFiles.jpeg(jpeg, profile: p3)) == intact)
    }

    /// Damaged, lying or unsupported profiles: the image decodes as if it had none (what the file
    /// holds, taken as sRGB), and the decoder's logger says why.
    @Test(arguments: [
        "jpeg: the profile cut in half",
        "jpeg: a tag claiming 2 GB",
        "jpeg: random bytes",
        "jpeg: chunk 2 of 3 missing",
        "jpeg: chunk 1 twice",
        "jpeg: counts that disagree",
        "jpeg: chunk number 0",
        "jpeg: 255 chunks of junk",
        "jpeg: an RGB profile on a grey image",
        "jpeg: a grey profile on a colour image",
        "png: an iCCP chunk whose CRC fails",
        "png: an iCCP chunk that is not zlib",
        "png: an iCCP profile inflating to 20 MB",
        "png: an iCCP chunk without a keyword",
        "webp: an ICCP chunk of junk",
        "webp: the ICC flag without an ICCP chunk",
    ])
    func aDamagedProfileIsIgnoredAndLogged(_ damage: String) throws {
        let p3 = try ProfiledFiles.profile(ProfiledFiles.displayP3)
        let image = Self.patchImage()
        let jpeg = try SampleEncoder.jpeg(image, quality: 98), png = Array(try PNGEncoder().encode(image)), webp = try SampleEncoder.webp(image)
        var junk = SeededGenerator(seed: 16)
        let random = (0..<3_000).map { _ in UInt8.random(in: 0...255, using: &junk) }
        func patched(_ profile: [UInt8], _ offset: Int, _ value: UInt32) -> [UInt8] {
            var bytes = profile
            for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
            return bytes
        }
        let bytes: [UInt8] = switch damage {
        case "jpeg: the profile cut in half": ProfiledFiles.jpeg(jpeg, profile: Array(p3.prefix(p3.count / 2)))
        case "jpeg: a tag claiming 2 GB": ProfiledFiles.jpeg(jpeg, profile: patched(p3, 128 + 4 + 4 * 12 + 8, 0x7FFF_FFF0))   // rXYZ's size
        case "jpeg: random bytes": ProfiledFiles.jpeg(jpeg, profile: random)
        case "jpeg: chunk 2 of 3 missing":
            ProfiledFiles.jpeg(jpeg, segments: ProfiledFiles.app2(p3[0..<300], number: 1, of: 3) + ProfiledFiles.app2(p3[600...], number: 3, of: 3))
        case "jpeg: chunk 1 twice":
            ProfiledFiles.jpeg(jpeg, segments: ProfiledFiles.app2(p3[0..<300], number: 1, of: 2) + ProfiledFiles.app2(p3[0..<300], number: 1, of: 2))
        case "jpeg: counts that disagree":
            ProfiledFiles.jpeg(jpeg, segments: ProfiledFiles.app2(p3[0..<300], number: 1, of: 2) + ProfiledFiles.app2(p3[300...], number: 2, of: 3))
        case "jpeg: chunk number 0": ProfiledFiles.jpeg(jpeg, segments: ProfiledFiles.app2(p3[...], number: 0, of: 1))
        case "jpeg: 255 chunks of junk":
            ProfiledFiles.jpeg(jpeg, segments: (1...255).flatMap { ProfiledFiles.app2(random[0..<1_000], number: $0, of: 255) })
        case "jpeg: an RGB profile on a grey image":
            ProfiledFiles.jpeg(try SampleEncoder.jpeg(image, quality: 98, options: CInt(IMGC_JPEG_GRAY)), profile: p3)
        case "jpeg: a grey profile on a colour image": ProfiledFiles.jpeg(jpeg, profile: try ProfiledFiles.profile(ProfiledFiles.greyLinear))
        case "png: an iCCP chunk whose CRC fails":
            { var chunk = PNGChunks.iccp(p3); chunk[chunk.count - 1] ^= 0xFF; return PNGChunks.inserting(chunk, into: png) }()
        case "png: an iCCP chunk that is not zlib": PNGChunks.inserting(PNGChunks.chunk("iCCP", Array("ICC".utf8) + [0, 0] + random), into: png)
        case "png: an iCCP profile inflating to 20 MB":
            PNGChunks.inserting(PNGChunks.chunk("iCCP", Array("ICC".utf8) + [0, 0] + (try ProfiledFiles.profile("zeros-20mb.zlib"))), into: png)
        case "png: an iCCP chunk without a keyword": PNGChunks.inserting(PNGChunks.chunk("iCCP", [0, 0] + PNGChunks.zlib(p3)), into: png)
        case "webp: an ICCP chunk of junk": ProfiledFiles.webp(webp, width: 64, height: 32, profile: random)
        default: ProfiledFiles.webp(webp, width: 64, height: 32, profile: nil)
        }
        var handler = InMemoryLogHandler()
        handler.logLevel = .debug
        let logging = ImageDecoder(logger: Logger(label: "test", factory: { [handler] _ in handler }))
        let decoded = try logging.decode(bytes)
        #expect(decoded == (try untagged.decode(bytes)), "\(damage): decoded as if it had no profile")
        let warnings = handler.entries.filter { $0.level == .warning && "\($0.message)".contains("colour profile not applied") }
        #expect(warnings.count == 1, "\(damage): \(handler.entries)")
        let reason = warnings.first?.metadata["reason"].map { "\($0)" } ?? ""
        #expect(!reason.isEmpty, "\(damage): a reason")
        print("\(damage): \(reason)")
    }
}
