import ArgumentParser
import Decoding
import Foundation
import Testing
import TestSupport
@testable import cli

/// What a run of the command loads (docs/startup.md): a decision loads neither libcurl, libsystemd,
/// Foundation's internationalization and ICU nor the image codecs and Little CMS (`--size` loads those:
/// SizeOptionTests); `--fetch` loads libcurl only when it transfers;
/// without libcurl, a fetch fails in one line. Read from the dynamic loader itself
/// (`LD_DEBUG=libs` lists every shared library it initialises), so that linking one of them
/// again, directly or through a dependency, fails these tests.
struct StartupTests {
    let cli = CLIRunner()

    /// The shared libraries the loader initialised during a run, by file name.
    static func librariesLoaded(_ result: CLIRunner.Result) -> Set<String> {
        var names = Set<String>()
        for line in result.stderr.split(separator: "\n") {
            guard let range = line.range(of: "calling init: ") else { continue }
            let path = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
            names.insert(URL(fileURLWithPath: path).lastPathComponent)
        }
        return names
    }

    /// Runs with the loader's list of libraries on standard error.
    func runListingLibraries(_ arguments: [String], environment: [String: String] = [:]) async throws -> (CLIRunner.Result, Set<String>) {
        let result = try await cli.run(arguments, environment: environment.merging(["LD_DEBUG": "libs"]) { _, new in new })
        let libraries = Self.librariesLoaded(result)
        // The listing works: the C library is always there (else the test proves nothing).
        #expect(libraries.contains { $0.hasPrefix("libc.so") }, "no library listed: \(result.stderr.prefix(500))")
        return (result, libraries)
    }

    static func loaded(_ prefixes: [String], in libraries: Set<String>) -> [String] {
        libraries.filter { name in prefixes.contains { name.hasPrefix($0) } }.sorted()
    }

    static let fetchOnly = ["libcurl", "libssl", "libcrypto", "libnghttp2", "libssh", "libgssapi", "libldap", "librtmp"]
    static let internationalization = ["libFoundation.so", "libFoundationInternationalization", "lib_FoundationICU", "libicu"]
    /// The image codecs and Little CMS: each loaded at its first use (CImageCodecs).
    static let codecs = ["libturbojpeg", "libpng16", "libwebp", "libgif", "liblcms2"]

    @Test func aDecisionLoadsNeitherLibcurlNorLibsystemdNorICUNorTheCodecs() async throws {
        let item = try cli.home.write(#"{"id": "x", "original": "https://images.example.com/x.jpg"}"#, to: "item.json")
        let (result, libraries) = try await runListingLibraries(["--network", "wifi", "--item", item, "--cache-dir", cli.home.file("cache")])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("x: load original"))
        #expect(Self.loaded(Self.fetchOnly, in: libraries) == [])
        #expect(Self.loaded(["libsystemd"], in: libraries) == [])
        #expect(Self.loaded(Self.internationalization, in: libraries) == [])
        #expect(Self.loaded(Self.codecs, in: libraries) == [])
    }

    @Test func aFetchLoadsLibcurlOnlyWhenItTransfers() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 3_000, seed: 4))])
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        let arguments = ["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cli.home.file("cache")]
        let (first, loadedFirst) = try await runListingLibraries(arguments)
        #expect(first.status == 0)
        #expect(first.stdout.hasPrefix("x: load original from network, 3000 bytes"))
        #expect(Self.loaded(["libcurl"], in: loadedFirst) == ["libcurl.so.4"])
        // The second run finds the image on disk: a transport is made, but nothing transfers.
        let (second, loadedSecond) = try await runListingLibraries(arguments)
        #expect(second.stdout.hasPrefix("x: show-cached original from disk, 3000 bytes"))
        #expect(Self.loaded(Self.fetchOnly, in: loadedSecond) == [])
        #expect(server.hits("/o.png") == 1)
    }

    /// Little CMS is loaded by the first image with an embedded colour profile, never for one
    /// without: `--size` of an untagged PNG loads the codecs but not liblcms2; the same PNG with a
    /// Display P3 profile loads it.
    @Test func littleCMSIsLoadedOnlyForAnImageWithAColourProfile() async throws {
        let plain = Array(try PNGEncoder().encode(DecodedImage(width: 16, height: 16, bytesPerRow: 64, pixels: [UInt8](repeating: 200, count: 16 * 16 * 4))))
        let profile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: PackagePaths.root + "/Tests/DecodingFixtures/display-p3-lcms.icc")))
        let server = try TestHTTPServer(routes: ["/plain.png": .ok(plain), "/p3.png": .ok(PNGChunks.inserting(PNGChunks.iccp(profile), into: plain))])
        for (path, expected) in [("/plain.png", [String]()), ("/p3.png", ["liblcms2.so.2"])] {
            let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url(path))"}"#, to: "item.json")
            let (result, libraries) = try await runListingLibraries(["--network", "wifi", "--item", item, "--fetch", "--cache-dir",
                                                                     cli.home.file("cache"), "--size", "8x8"])
            #expect(result.status == 0, "\(result.stderr.suffix(500))")
            #expect(Self.loaded(["libpng16"], in: libraries) == ["libpng16.so.16"], "\(path): the codec is loaded")
            #expect(Self.loaded(["liblcms2"], in: libraries) == expected, "\(path)")
        }
    }

    /// `IMGPOLICY_LIBCURL` names the file loaded instead of libcurl.so.4: for this test only.
    @Test func withoutLibcurlAFetchFailsInOneLineAndADecisionStillWorks() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 3_000, seed: 5))])
        let url = server.url("/o.png")
        let item = try cli.home.write(#"{"id": "x", "original": "\#(url)"}"#, to: "item.json")
        let missing = ["IMGPOLICY_LIBCURL": "libimgpolicy-test-missing.so.4"]
        let fetch = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cli.home.file("cache")],
                                      environment: missing)
        #expect(fetch.status == 69)
        #expect(fetch.stderr == "imgpolicy: \(url): libcurl could not be loaded (libimgpolicy-test-missing.so.4: cannot open shared object file: No such file or directory): install Debian's libcurl4 (curl 2)\n")
        #expect(server.totalHits == 0)
        let decision = try await cli.run(["--network", "wifi", "--item", item, "--cache-dir", cli.home.file("cache")], environment: missing)
        #expect(decision.status == 0)
        #expect(decision.stdout.hasPrefix("x: load original"))
    }

    /// A decision only reads the cache: an empty cache folder holds no image, so it is neither
    /// opened nor written (no marker, journal or `tmp`), and the decision is the same; a `--fetch`
    /// then makes it a cache, which the next decision consults.
    @Test func aDecisionWritesNothingIntoAnEmptyCacheFolder() async throws {
        let item = try cli.home.write(#"{"id": "x", "original": "https://images.example.com/x.jpg"}"#, to: "item.json")
        try FileManager.default.createDirectory(atPath: cli.home.file("cache"), withIntermediateDirectories: true)
        let result = try await cli.run(["--network", "wifi", "--item", item, "--cache-dir", cli.home.file("cache")])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("x: load original https://images.example.com/x.jpg"))
        #expect(try cli.home.list("cache") == [])
    }

    /// Every option of a decision as text: the fast path must read each as swift-argument-parser does.
    static func summary(_ options: DecisionOptions) -> String {
        String(describing: options)
    }

    /// The plain decisions `QuickDecide` reads: the same options, one for one, as
    /// swift-argument-parser's parse of the same arguments.
    @Test(arguments: [
        ["--item", "item.json"],
        ["--network", "wifi", "--item", "item.json", "--cache-dir", "/tmp/cache"],
        ["decide", "--item", "-", "--network", "cellular", "--json"],
        ["--item", "i.json", "--network", "auto", "--expensive", "--constrained", "--roaming", "--captive", "--explain",
         "--throughput", "12000", "--policy", "strict", "--settings", "s.json", "--set", "a=1", "--set", "b=off",
         "--cached", "thumbnail", "--cached", "original"],
        ["--item", "i.json", "--fetch", "--output", "o.png", "--size", "40x30", "--cache-dir", "c"],
        ["--item", "settings"],
    ])
    func theFastPathReadsWhatArgumentParserReads(_ arguments: [String]) throws {
        let quick = try #require(QuickDecide.options(from: arguments))
        let parsed = try #require(try Imgpolicy.parseAsRoot(arguments) as? Decide)
        #expect(Self.summary(quick) == Self.summary(try parsed.options()))
    }

    /// Everything else is left to swift-argument-parser, whose messages and exit statuses stay.
    @Test(arguments: [
        [], ["--help"], ["-h"], ["--version"], ["help"], ["settings", "list"], ["policy", "list"], ["decide", "--help"],
        ["--item=i.json"], ["--item"], ["--item", "--json"], ["--item", "i.json", "--json", "--json"],
        ["--item", "i.json", "--item", "j.json"], ["--item", "i.json", "--network", "wlan"], ["--item", "i.json", "-v"],
        ["--item", "i.json", "--verbose"], ["--item", "i.json", "--output", "o.png"], ["--item", "i.json", "--fetch", "--output", "-"],
        ["--network", "wifi"], ["--item", "i.json", "extra"], ["--item", "i.json", "--"], ["--item", "i.json", "--cached", "both"],
        ["--item", "i.json", "--size", "0x5"], ["--item", "i.json", "--throughput", "-5"], ["--item", "i.json", "--jsn"],
        ["--item", "i.json", "--set"],
    ])
    func anythingElseIsLeftToArgumentParser(_ arguments: [String]) {
        #expect(QuickDecide.options(from: arguments) == nil)
    }
}
