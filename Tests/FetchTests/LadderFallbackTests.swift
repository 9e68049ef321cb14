import Fetch
@testable import Caching
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// Issue 18, found by the probe: a rung that fails to load falls back to the widest cached image
/// of the item narrower than it (not only an original to its thumbnail), against a real server.
struct LadderFallbackTests {
    static let transport = CurlTransport(configuration: .patient)

    @Test func aFailedRungFallsBackToTheWidestCachedNarrowerRung() async throws {
        let server = try TestHTTPServer()
        let folder = TemporaryFolder()
        let pipeline = ImagePipeline(downloader: Self.transport, disk: try DiskCache(folder: folder.path))
        for width in [160, 320] { server.route("/p/\(width).png", .ok(TestImages.png(seed: width))) }
        server.route("/p/640.png", .status(404))
        let ladder = try ImageLadder(template: server.url("/p/{width}.png"), widths: [160, 320, 640, 1280])
        let item = ImageItem(id: "p", ladder: ladder)
        for width in [160, 320] { _ = try await pipeline.image(for: try #require(ImageURL(server.url("/p/\(width).png")))) }
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/fit-display.json")
        let decision = policy.decide(item, network: NetworkState(.wifi), settings: policy.defaultSettings, cache: pipeline,
                                     displayWidth: 400)
        #expect(decision.rung?.width == 640 && decision.action.kind == .load, "\(decision)")
        guard case .failed(_, let error, let fallback) = await pipeline.load(item, decision: decision) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .httpStatus(404))
        #expect(fallback?.url.absoluteString == server.url("/p/320.png"))
        #expect(fallback?.bytes == TestImages.png(seed: 320), "the server's own bytes of the 320 rung")
        // What is tried, widest first; nothing below the narrowest.
        #expect(item.narrowerImages(than: ladder.narrowest.url).isEmpty)
        #expect(item.narrowerImages(than: ladder.widest.url).map(\.absoluteString) == [640, 320, 160].map { server.url("/p/\($0).png") })
    }
}
