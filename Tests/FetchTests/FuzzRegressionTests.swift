import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// What the fuzz targets of the Fetch module found (Fuzz/, scripts/fuzz.sh), kept as tests, and
/// their seed corpora replayed on every test run.
struct FuzzRegressionTests {
    static let url = ImageURL("http://127.0.0.1:8080/fuzz.png")!

    /// A real entry for `url`, as `DiskCache.store` writes it.
    static func realEntry(in folder: TemporaryFolder) throws -> [UInt8] {
        let cache = try DiskCache(folder: folder.file("cache"))
        try cache.store(TestImages.png(size: 300, seed: 6), for: url)
        let entry = try [UInt8](Data(contentsOf: URL(fileURLWithPath: cache.entryPath(for: url))))
        try #require(DiskCache.body(of: entry, for: url) == TestImages.png(size: 300, seed: 6))
        return entry
    }

    /// Crasher `Fuzz/cache-entry/corpus/crasher-body-length-high-bit` (found in 231 runs; issue 6
    /// fault 1): a body-length field with its top bit set trapped in `Int(UInt64)`
    /// ("Not enough bits to represent the passed value", DiskCache.swift:110).
    @Test
    func aBodyLengthWithItsTopBitSetIsADamagedEntry() throws {
        let folder = TemporaryFolder()
        var entry = try Self.realEntry(in: folder)
        entry[15] = 0x80
        #expect(DiskCache.body(of: entry, for: Self.url) == nil)
    }

    /// Crasher `Fuzz/cache-entry/corpus/crasher-body-length-overflow` (found once the first was
    /// patched): a body length just below `Int.max` overflowed `headerSize + urlLength +
    /// bodyLength` (DiskCache.swift:114).
    @Test
    func aBodyLengthNearIntMaxIsADamagedEntry() throws {
        let folder = TemporaryFolder()
        var entry = try Self.realEntry(in: folder)
        entry.replaceSubrange(8..<16, with: [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(DiskCache.body(of: entry, for: Self.url) == nil)
    }

    /// Every file of the cache-entry corpus (real entries, crashers) goes through the parser as
    /// the fuzz target sends it: against the corpus's URL and against the URL its header names.
    @Test
    func theCacheEntryCorpusParsesWithoutTrapping() throws {
        let files = try corpus("cache-entry")
        #expect(files.count >= 5)
        var intact = 0
        for (_, bytes) in files {
            if DiskCache.body(of: bytes, for: Self.url) != nil { intact += 1 }
            if bytes.count >= 36 {
                let length = Int(bytes[32]) | Int(bytes[33]) << 8 | Int(bytes[34]) << 16 | Int(bytes[35]) << 24
                if length <= bytes.count - 36, let text = String(validating: bytes[36..<36 + length], as: UTF8.self),
                   let url = ImageURL(text), DiskCache.body(of: bytes, for: url) != nil {
                    intact += 1
                }
            }
        }
        #expect(intact >= 1, "no real entry in the corpus parses: is it still in the cache's format?")
    }

    /// Every file of the sniffing corpus is recognised or described without trapping.
    @Test func theSniffCorpusIsRecognisedWithoutTrapping() throws {
        let files = try corpus("sniff")
        let formats = Set(files.compactMap { ImageFormat.sniff($0.bytes) })
        #expect(formats == Set(ImageFormat.allCases), "the corpus should start every format: \(formats)")
        for (_, bytes) in files { #expect(!ImageFormat.describeStart(bytes).isEmpty) }
    }

    /// The files of `Fuzz/<target>/corpus`, by name.
    func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = PackagePaths.root + "/Fuzz/" + target + "/corpus"
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { name in
            (name, try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))))
        }
    }
}
