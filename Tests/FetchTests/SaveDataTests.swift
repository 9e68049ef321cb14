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

/// `Save-Data` and `Accept` as the loopback server sees them, per network state, and a response
/// of a format not asked for refused.
struct SaveDataTests {
    static let transport = CurlTransport()
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    func url(_ path: String) -> ImageURL { ImageURL(server.url(path))! }

    @Test(arguments: [
        ("wifi", NetworkState(.wifi), false),
        ("wired", NetworkState(.wired), false),
        ("cellular", NetworkState(.cellular), true),
        ("wifi expensive (hotspot)", NetworkState(.wifi, isExpensive: true), true),
        ("wifi constrained (Low Data Mode)", NetworkState(.wifi, isConstrained: true), true),
        ("cellular roaming", NetworkState(.cellular, isRoaming: true), true),
    ])
    func saveDataAndAcceptAreSentPerNetworkState(name: String, network: NetworkState, savesData: Bool) async throws {
        server.route("/a", .ok(TestImages.png()))
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil)
        _ = try await pipeline.image(for: url("/a"), network: network)
        let request = try #require(server.requests("/a").last)
        #expect(request.header("Save-Data") == (savesData ? "on" : nil), "\(name)")
        #expect(request.header("Accept") == HTTPOptions.standard.acceptHeader, "\(name)")
    }

    @Test func saveDataCanBeTurnedOff() async throws {
        server.route("/off", .ok(TestImages.png()))
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil, http: HTTPOptions(sendsSaveData: false))
        _ = try await pipeline.image(for: url("/off"), network: NetworkState(.cellular, isExpensive: true))
        #expect(server.requests("/off").last?.header("Save-Data") == nil)
    }

    @Test func theStandardAcceptListsTheBestFormatsFirst() {
        #expect(HTTPOptions.standard.acceptHeader.hasPrefix("image/webp,image/avif,image/png,image/jpeg,image/gif;q=0.8,"))
        #expect(HTTPOptions(acceptedFormats: [.png, .jpeg]).acceptHeader == "image/png,image/jpeg")
    }

    @Test func aResponseOfAFormatNotAskedForIsRefused() async throws {
        let webp = try #require(TestImages.samples.first { $0.name == "webp" }?.bytes)
        server.route("/w", .ok(webp, contentType: "image/webp"))
        let pipeline = ImagePipeline(downloader: Self.transport, disk: nil, http: HTTPOptions(acceptedFormats: [.png, .jpeg]))
        let expected = FetchError(url: url("/w"), code: .formatNotAsked(received: .webp, asked: [.png, .jpeg]))
        await #expect(throws: expected) { try await pipeline.image(for: url("/w")) }
        #expect(server.requests("/w").last?.header("Accept") == "image/png,image/jpeg")
        #expect(expected.description.contains(url("/w").absoluteString) && expected.description.contains("webp")
                && expected.description.contains("png, jpeg"))
    }
}
