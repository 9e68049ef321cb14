import Testing
import TestSupport
@testable import Decoding

/// Memory running out while decoding, resampling, turning or encoding is a `DecodingError` of kind
/// `.outOfMemory` whose one-line message names the image's size and the bytes that could not be
/// had, never a trap (issue 16 probe, finding 4: a Swift array of 400 MB that cannot be allocated
/// stops the process). The buffers come from an injected `ImageMemory` here, which refuses them;
/// `SizeOptionTests.memoryRunningOutIsOneLineAndExit74NotATrap` runs the command under a real
/// address-space limit.
@Suite struct MemoryFailureTests {
    /// A memory that refuses every request of more than `limit` bytes.
    static func refusing(above limit: Int) -> ImageMemory {
        ImageMemory { count in count > limit ? nil : ImageMemory.system.allocate(count) }
    }

    /// A 64 × 48 image (GIF: four colours).
    static func source(_ format: String) -> DecodedImage {
        format == "gif" ? Samples.quadrants(width: 64, height: 48) : Samples.gradient(width: 64, height: 48)
    }

    /// The decoded pixels cannot be had: every format, at full size and scaled.
    @Test(arguments: ["jpeg", "png", "webp", "gif"])
    func theDecodedPixelsThatCannotBeHadAreOutOfMemory(format: String) throws {
        let bytes = try DecodingTests().encode(Self.source(format), format)
        let decoder = ImageDecoder(memory: Self.refusing(above: 0))
        for target in [nil, TargetSize(width: 16, height: 16)] {
            let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes, to: target) }
            #expect(error.kind == .outOfMemory, "\(error)")
            #expect(error.declaredSize?.width == 64 && error.declaredSize?.height == 48, "\(error)")
            #expect(error.description.contains("out of memory (64x48)") && error.description.contains("cannot allocate"), "\(error)")
            #expect(!error.description.contains("\n"))
            #expect(!error.meansDamagedBytes, "bytes that may be fine are not thrown away")
        }
    }

    /// The image is decoded, but the downsampled copy cannot be had (only buffers of the decoded
    /// size are granted): out of memory naming the image's size, not the output's.
    @Test(arguments: ["png", "webp", "gif"])
    func theResampledPixelsThatCannotBeHadAreOutOfMemory(format: String) throws {
        let bytes = try DecodingTests().encode(Self.source(format), format)
        let decoder = ImageDecoder(memory: ImageMemory { count in count == 64 * 48 * 4 ? ImageMemory.system.allocate(count) : nil })
        let error = try #require(throws: DecodingError.self) { try decoder.decode(bytes, to: TargetSize(width: 16, height: 16)) }
        #expect(error.kind == .outOfMemory && error.description.contains("(64x48)") && error.description.contains("resampled"), "\(error)")
        #expect(try decoder.decode(bytes).width == 64, "at full size nothing more is needed")
    }

    /// A declared 10,000 × 10,000 image (inside the 100-megapixel limit) whose 400 MB cannot be
    /// had: the message names the size and the bytes, in one line.
    @Test func aHundredMegapixelPNGBeyondMemoryNamesItsSize() throws {
        let decoder = ImageDecoder(memory: Self.refusing(above: 64 << 20))
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(LargeImages.greyPNG(width: 10_000, height: 10_000), to: TargetSize(width: 100, height: 100))
        }
        #expect(error.description == "PNG: out of memory (10000x10000): cannot allocate 400000000 bytes for the decoded 10000x10000 pixels")
    }

    /// The PNG encoder's output buffer that cannot be had.
    @Test func aPNGThatCannotBeHadIsOutOfMemory() throws {
        let error = try #require(throws: DecodingError.self) {
            try PNGEncoder(memory: Self.refusing(above: 0)).encode(Samples.gradient(width: 64, height: 48))
        }
        #expect(error.kind == .outOfMemory && error.description.hasPrefix("PNG: out of memory: cannot allocate"), "\(error)")
    }
}
