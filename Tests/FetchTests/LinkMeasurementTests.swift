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

/// The link estimate fed by the real transport over loopback: libcurl's figures on each
/// response, recorded by the pipeline on the load's network, read by `ImageLoader`'s decisions
/// (a slow Wi-Fi gets thumbnails, a fast one originals), and sent as `ECT`/`Downlink` hints.
struct LinkMeasurementTests {
    static let transport = CurlTransport()
    static let wifi = NetworkState(.wifi)
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    /// A loader on Wi-Fi with `policy` over a pipeline without a disk cache (every load downloads).
    func loader(_ policy: String) throws -> ImageLoader {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/\(policy).json")
        return ImageLoader(policy: policy, reachability: FixedReachability(Self.wifi), settings: InMemorySettingsStore(),
                           pipeline: ImagePipeline(downloader: Self.transport, disk: nil))
    }

    /// Item `index`: its original at `original` + index (routed to `response`), its thumbnail
    /// at `/thumbnail` + index.
    func item(_ index: Int, original: String, _ response: TestHTTPServer.Response) -> ImageItem {
        server.route(original + "\(index)", response)
        server.route("/thumbnail\(index)", .ok(TestImages.png()))
        return ImageItem(id: "\(index)", original: url(original + "\(index)"), thumbnail: url("/thumbnail\(index)"))
    }

    /// 24 KiB dripped 1 KiB every 50 ms: about 20 KB/s, below the policies' 50 KiB/s.
    static let slowRoute = TestHTTPServer.Response.drip(TestImages.png(size: 24 << 10, seed: 1), chunk: 1024, interval: 0.05)
    /// 512 KiB at once over loopback: far above it (slow only if it took over 10 s, which not even
    /// ThreadSanitizer on a loaded machine comes near).
    static let fastRoute = TestHTTPServer.Response.ok(TestImages.png(size: 512 << 10, seed: 2))

    @Test("a slow Wi-Fi measured by the transport gets the thumbnail", arguments: ["low-data", "slow-wifi-thumbnails"])
    func aSlowWiFiMeasuredByTheTransportGetsTheThumbnail(policy: String) async throws {
        let loader = try loader(policy)
        var decisions: [Decision] = []
        for index in 0..<2 {
            let item = item(index, original: "/slow", Self.slowRoute)
            let decision = try loader.decide(item)
            decisions.append(decision)
            guard decision.variant == .original else { break }
            guard case .imageReady = await loader.load(item, decision: decision) else {
                Issue.record("the original did not load")
                return
            }
        }
        #expect(decisions.first?.variant == .original, "unmeasured: not slow")
        let estimate = try #require(loader.pipeline.linkEstimate(for: Self.wifi))
        #expect(estimate.bytesPerSecond < 51_200, "\(estimate)")
        #expect(decisions.count == 2 && decisions.last?.variant == .thumbnail, "\(decisions.map(\.rule))")
        #expect(loader.pipeline.linkEstimate(for: NetworkState(.cellular)) == nil, "the estimate is for the Wi-Fi")
    }

    @Test("a fast Wi-Fi measured by the transport keeps the original", arguments: ["low-data", "slow-wifi-thumbnails"])
    func aFastWiFiKeepsTheOriginal(policy: String) async throws {
        let loader = try loader(policy)
        for index in 0..<3 {
            let item = item(index, original: "/fast", Self.fastRoute)
            let decision = try loader.decide(item)
            #expect(decision.variant == .original, "\(decision.rule)")
            guard case .imageReady = await loader.load(item, decision: decision) else {
                Issue.record("the original did not load")
                return
            }
        }
        let estimate = try #require(loader.pipeline.linkEstimate(for: Self.wifi))
        #expect(estimate.bytesPerSecond > 51_200 && estimate.sampleCount == 3, "\(estimate)")
        #expect(try loader.decide(item(9, original: "/fast", Self.fastRoute)).variant == .original)
    }

    @Test func theTransportReportsLibcurlFiguresAndA304AsFromTheCache() async throws {
        let body = TestImages.png(size: 40_000, seed: 5)
        server.route("/t", .request { request in
            request.header("If-None-Match") == "\"v\"" ? .headers(304, ["ETag: \"v\""]) : .headers(200, ["ETag: \"v\"", "Content-Type: image/png"], body)
        })
        let whole = try await Self.transport.response(for: url("/t"), headers: [])
        let timing = try #require(whole.timing)
        #expect(timing.bodyBytes == Int64(body.count) && timing.totalSeconds > 0 && !timing.fromCache)
        #expect(timing.firstByteSeconds >= 0 && timing.firstByteSeconds <= timing.totalSeconds)
        #expect(whole.attempts == 1)
        let notModified = try await Self.transport.response(for: url("/t"), headers: [("If-None-Match", "\"v\"")])
        #expect(notModified.status == 304 && notModified.timing?.fromCache == true)
    }

    @Test func smallBodiesAndLoadsWithoutANetworkAreNotMeasured() async throws {
        server.route("/small", .ok(TestImages.png(size: 2_000)))
        server.route("/big", Self.fastRoute)
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil)
        _ = try await pipeline.image(for: url("/small"), network: Self.wifi)
        _ = try await pipeline.image(for: url("/big"))
        #expect(pipeline.linkEstimate(for: Self.wifi) == nil)
        let unmeasured = ImagePipeline(downloader: Self.transport, disk: nil, linkEstimator: nil)
        _ = try await unmeasured.image(for: url("/big"), network: Self.wifi)
        #expect(unmeasured.linkEstimate(for: Self.wifi) == nil)
    }

    // MARK: - ECT and Downlink

    @Test func ectAndDownlinkAreSentOnceTheLinkIsMeasured() async throws {
        for path in ["/h1", "/h2", "/h3"] { server.route(path, .ok(TestImages.png())) }
        let estimator = LinkEstimator()
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil, linkEstimator: estimator)
        _ = try await pipeline.image(for: url("/h1"), network: Self.wifi)
        let unmeasured = try #require(server.requests("/h1").last)
        #expect(unmeasured.header("ECT") == nil && unmeasured.header("Downlink") == nil)
        // 30 KB/s (240 kb/s), 300 ms to the first byte: 3g, 0.25 Mb/s.
        estimator.record(TransferTiming(bodyBytes: 30_000, totalSeconds: 1, firstByteSeconds: 0.3), on: Self.wifi)
        _ = try await pipeline.image(for: url("/h2"), network: Self.wifi)
        let measured = try #require(server.requests("/h2").last)
        #expect(measured.header("ECT") == "3g" && measured.header("Downlink") == "0.25")
        #expect(measured.header("Save-Data") == nil, "a Wi-Fi saves no data: the hints come alone")
        // Another network kind has no estimate yet.
        _ = try await pipeline.image(for: url("/h3"), network: NetworkState(.cellular))
        let cellular = try #require(server.requests("/h3").last)
        #expect(cellular.header("ECT") == nil && cellular.header("Save-Data") == "on")
    }

    @Test func theHintsCanBeTurnedOff() async throws {
        server.route("/off", .ok(TestImages.png()))
        let estimator = LinkEstimator()
        estimator.record(TransferTiming(bodyBytes: 30_000, totalSeconds: 1, firstByteSeconds: 0.3), on: Self.wifi)
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil, http: HTTPOptions(sendsNetworkHints: false),
                                     linkEstimator: estimator)
        _ = try await pipeline.image(for: url("/off"), network: Self.wifi)
        let request = try #require(server.requests("/off").last)
        #expect(request.header("ECT") == nil && request.header("Downlink") == nil)
    }

    @Test("ECT and Downlink per the Network Information table", arguments: [
        (8_000_000.0, 50, "4g", "10"),        // 64 Mb/s: capped at 10
        (200_000.0, 100, "4g", "1.6"),        // 1.6 Mb/s
        (200_000.0, 300, "3g", "1.6"),        // slow to answer: 3g whatever the rate
        (30_000.0, 100, "3g", "0.25"),        // 240 kb/s
        (8_000.0, 100, "2g", "0.075"),        // 64 kb/s (nearest 25 kb/s: 75)
        (4_000.0, 100, "slow-2g", "0.025"),   // 32 kb/s
        (1_000_000.0, 1_500, "2g", "8"),
        (1_000_000.0, 2_500, "slow-2g", "8"),
        (0.0, 0, "slow-2g", "0"),
    ] as [(Double, Int, String, String)])
    func networkHints(bytesPerSecond: Double, latencyMilliseconds: Int, ect: String, downlink: String) throws {
        let hints = try #require(NetworkHints(LinkEstimate(bytesPerSecond: bytesPerSecond, latency: .milliseconds(latencyMilliseconds))))
        #expect(hints.effectiveType == ect && hints.downlink == downlink)
    }

    @Test func hostileEstimatesNeverTrap() {
        #expect(NetworkHints(LinkEstimate(bytesPerSecond: .infinity, latency: .seconds(Int64.max)))?.downlink == "10")
        #expect(NetworkHints(LinkEstimate(bytesPerSecond: .nan))?.downlink == "0")
    }
}

/// `Accept` limited to what the app's decoder decodes.
struct AcceptedFormatsTests {
    @Test func theFormatsADecoderNamesAreAcceptedBestFirstAndNothingElse() {
        let formats = HTTPOptions.standardFormats(limitedTo: ["GIF", "jpg", "PNG", "WebP", "image/png", "jpeg2000", ""])
        #expect(formats == [.webp, .png, .jpeg, .gif])
        #expect(HTTPOptions(acceptedFormats: formats).acceptHeader == "image/webp,image/png,image/jpeg,image/gif;q=0.8")
        #expect(HTTPOptions.standardFormats(limitedTo: []) == [])
    }

    @Test func aFormatTheDecoderCannotDecodeIsNeitherAskedForNorAccepted() async throws {
        let server = try TestHTTPServer()
        let avif = try #require(TestImages.samples.first { $0.name == "avif" }?.bytes)
        server.route("/a", .ok(avif, contentType: "image/avif"))
        let url = ImageURL(server.url("/a"))!
        let formats = HTTPOptions.standardFormats(limitedTo: ["JPEG", "PNG", "WebP", "GIF"])
        let pipeline = ImagePipeline(downloader: LinkMeasurementTests.transport, disk: nil, http: HTTPOptions(acceptedFormats: formats))
        await #expect(throws: FetchError(url: url, code: .formatNotAsked(received: .avif, asked: formats))) {
            try await pipeline.image(for: url)
        }
        #expect(server.requests("/a").last?.header("Accept")?.contains("avif") == false)
    }
}
