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

/// A policy file's `revalidateStale` option carried out by the pipeline (`HTTPOptions.following`),
/// over loopback with an injected wall clock: which links revalidate a stale entry.
struct StaleRevalidationOptionTests {
    static func policy(_ option: String?) throws -> ImagePolicy {
        let line = option.map { #", "revalidateStale": "\#($0)""# } ?? ""
        return try ImagePolicy(json: Array(#"{"rules": [{"name": "all", "action": "load", "variant": "original", "reason": "r"}]\#(line)}"#.utf8),
                               name: "r", source: "r.json")
    }

    @Test("the policy's option decides which links revalidate a stale entry", arguments: [
        ("any-link", NetworkState(.cellular, isExpensive: true), true),
        ("any-link", NetworkState(.wifi, isRoaming: true), true),
        ("free-link", NetworkState(.cellular, isExpensive: true), false),
        ("free-link", NetworkState(.wifi), true),
        ("free-link", NetworkState(.cellular), false),             // cellular, even unmetered, is not free
        ("any-link", NetworkState(.wifi, isCaptive: true), false),  // captive: no request can reach the server
        (nil, NetworkState(.cellular), false),
        ("never", NetworkState(.wifi), false),
        (nil, NetworkState(.wifi), true),                          // not said: the options' default
        (nil, NetworkState(.cellular, isExpensive: true), false),
    ] as [(String?, NetworkState, Bool)])
    func theOptionDecides(option: String?, network: NetworkState, revalidated: Bool) async throws {
        let base = try HTTPRevalidationTests()
        let clock = base.clock
        let http = HTTPOptions(clock: { clock.now }).following(try Self.policy(option))
        let pipeline = ImagePipeline(downloader: HTTPRevalidationTests.transport, disk: base.disk, http: http)
        base.server.route("/s", HTTPRevalidationTests.entityTagRoute(TestImages.png(size: 2000)))
        _ = try await pipeline.image(for: base.url("/s"))
        await pipeline.flush()
        pipeline.memory.purge()
        clock.advance(3600)
        #expect(try await pipeline.image(for: base.url("/s"), network: network).source == .disk)
        // A revalidation is started (counted) before the stale image is returned.
        #expect(pipeline.statistics.revalidation.started == (revalidated ? 1 : 0))
        if revalidated {
            #expect(await waitUntil { pipeline.statistics.revalidation.notModified == 1 })
        }
        await pipeline.flush()
        #expect(base.server.hits("/s") == (revalidated ? 2 : 1))
    }

    @Test func optionsNotSaidByThePolicyStayAsTheAppSetThem() throws {
        let custom = HTTPOptions(revalidatesOnFreeLink: false, revalidatesOnExpensiveLink: true)
        let kept = custom.following(try Self.policy(nil))
        #expect(!kept.revalidatesOnFreeLink && kept.revalidatesOnExpensiveLink)
        let overridden = custom.following(try Self.policy("free-link"))
        #expect(overridden.revalidatesOnFreeLink && !overridden.revalidatesOnExpensiveLink)
    }
}
