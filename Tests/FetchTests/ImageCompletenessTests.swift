import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Testing
import TestSupport

/// `ImageCompleteness`: whole containers of each format are whole, and every body cut short of
/// its end is not, over every cut of small samples and seeded random cuts of large ones.
struct ImageCompletenessTests {
    /// Real files: the example PNGs and the decoding fixtures (a JPEG and an animated WebP made by
    /// ImageMagick).
    static let realFiles: [(name: String, bytes: [UInt8])] = {
        let root = PackagePaths.root
        let paths = ["examples/images", "Tests/DecodingFixtures"].flatMap { folder -> [String] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? []
            return names.filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") || $0.hasSuffix(".webp") }.sorted().map { "\(folder)/\($0)" }
        }
        return paths.compactMap { path in FileManager.default.contents(atPath: root + "/" + path).map { (path, [UInt8]($0)) } }
    }()

    static let checkedSamples = TestImages.samples.filter { !["tiff", "ico", "svg"].contains($0.name) }

    @Test func thereAreRealFilesOfThreeFormats() {
        let formats = Set(Self.realFiles.compactMap { ImageFormat.sniff($0.bytes) })
        #expect(formats.isSuperset(of: [.png, .jpeg, .webp]), "\(Self.realFiles.map(\.name))")
    }

    @Test(arguments: checkedSamples.map(\.name))
    func everyCutOfASampleIsIncomplete(_ name: String) throws {
        let bytes = try #require(TestImages.samples.first { $0.name == name }?.bytes)
        #expect(ImageCompleteness.check(bytes) == .whole)
        // A cut that still holds the signature: the format is recognised and must be incomplete.
        for length in 12..<bytes.count {
            let cut = Array(bytes.prefix(length))
            guard ImageFormat.sniff(cut) != nil else { continue }
            if case .incomplete = ImageCompleteness.check(cut) { continue }
            Issue.record("\(name) cut to \(length) of \(bytes.count) bytes was judged whole")
            return
        }
    }

    @Test func everyCutOfARealFileIsIncomplete() {
        for (name, bytes) in Self.realFiles {
            #expect(ImageCompleteness.check(bytes) == .whole, "\(name)")
            var cuts = Set<Int>()
            var generator = SeededGenerator(seed: 2026, label: "real file cuts")
            // A WebP ends where its RIFF size says (ImageMagick's animated fixture has a second
            // file after its first): cuts go below that end.
            var end = bytes.count
            if ImageFormat.sniff(bytes) == .webp { end = 8 + Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24 }
            while cuts.count < min(200, end - 16) { cuts.insert(Int.random(in: 16..<end, using: &generator)) }
            for length in cuts.sorted() {
                if case .incomplete = ImageCompleteness.check(Array(bytes.prefix(length))) { continue }
                Issue.record("\(name) cut to \(length) of \(bytes.count) bytes was judged whole")
                break
            }
        }
    }

    /// Except in ISO-BMFF (AVIF, HEIC), whose last box ends where the file does.
    @Test func bytesAfterTheEndAreAllowed() {
        for (name, bytes) in Self.realFiles + Self.checkedSamples where !["avif", "heic"].contains(name) {
            #expect(ImageCompleteness.check(bytes + Array("trailing".utf8)) == .whole, "\(name)")
        }
    }

    @Test func aJPEGScanWithStuffedBytesAndRestartMarkersEndsAtItsEOI() {
        // SOI, a DQT-like segment, SOS (length 8), entropy data with FF00 and RST0, then EOI.
        let scan: [UInt8] = [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0xD1, 0x78]
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x04, 1, 2, 0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0] + scan + [0xFF, 0xD9]
        #expect(ImageCompleteness.check(jpeg) == .whole)
        // The same without its EOI, or cut inside the scan, is not whole.
        for length in 4..<jpeg.count {
            #expect(ImageCompleteness.check(Array(jpeg.prefix(length))) != .whole, "cut at \(length)")
        }
        // A progressive file: a second scan after the first.
        let progressive = Array(jpeg.dropLast(2)) + [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0, 0x9A, 0xFF, 0xD9]
        #expect(ImageCompleteness.check(progressive) == .whole)
        // Junk between segments (what libjpeg calls extraneous bytes) is skipped, as decoders do.
        let junk = Array(jpeg.prefix(8)) + [0x00, 0x11] + Array(jpeg.dropFirst(8))
        #expect(ImageCompleteness.check(junk) == .whole)
    }

    @Test func hostileLengthsNeverTrap() {
        var generator = SeededGenerator(seed: 77, label: "hostile lengths")
        for sample in TestImages.samples {
            for _ in 0..<300 {
                var bytes = sample.bytes
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                _ = ImageCompleteness.check(bytes)
            }
        }
        let huge: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF] + Array("IDAT".utf8)
        #expect(ImageCompleteness.check(huge) != .whole)
        let box: [UInt8] = [0, 0, 0, 1] + Array("ftypavif".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(ImageCompleteness.check(box) != .whole)
    }

    @Test func formatsWithoutAnEndAreUnchecked() throws {
        for name in ["tiff", "ico", "svg"] {
            let bytes = try #require(TestImages.samples.first { $0.name == name }?.bytes)
            #expect(ImageCompleteness.check(bytes) == .unchecked)
        }
        #expect(ImageCompleteness.check(Array("not an image".utf8)) == .unchecked)
    }
}
