import Foundation
import Logging
import Policy
import Testing
import TestSupport
@testable import cli

/// The built `imgpolicy` run as a process.
struct DecideCommandTests {
    let cli = CLIRunner()

    @Test func theCardsExactCommand() async throws {
        let item = try cli.home.write(#"{"id": "x", "original": "https://img.example/x.jpg", "thumbnail": "https://img.example/x-t.jpg"}"#, to: "x.json")
        let result = try await cli.run(["--network", "cellular", "--item", item])
        #expect(result.status == 0)
        #expect(result.stdout == "x: load thumbnail https://img.example/x-t.jpg (rule cellular-thumbnail: on cellular only the thumbnail is loaded (alwaysDownloadOriginalImage is off))\n")
        #expect(result.stderr.isEmpty)
    }

    /// Issue 18: an item given as a CDN template decides as the article's two-rung case (the
    /// widest rung the original, the narrowest the thumbnail); a hostile template exits 65 naming
    /// the file, the line and the key.
    @Test func aTemplateItemDecidesAndAHostileOneExits65() async throws {
        let item = try cli.home.write(#"{"id": "p", "template": {"url": "https://cdn.example/p.jpg?w={width}", "widths": [1600, 160, 400]}}"#, to: "p.json")
        let cellular = try await cli.run(["--network", "cellular", "--item", item])
        #expect(cellular.status == 0 && cellular.stdout.hasPrefix("p: load thumbnail https://cdn.example/p.jpg?w=160 "), "\(cellular.stdout)")
        let wifi = try await cli.run(["--network", "wifi", "--item", item])
        #expect(wifi.status == 0 && wifi.stdout.hasPrefix("p: load original https://cdn.example/p.jpg?w=1600 "), "\(wifi.stdout)")
        let bad = try cli.home.write("[\n" + #"{"id": "q", "template": {"url": "https://cdn.example/q.jpg", "widths": [160]}}"# + "\n]", to: "q.json")
        let refused = try await cli.run(["--network", "wifi", "--item", bad])
        #expect(refused.status == 65)
        #expect(refused.stderr == "imgpolicy: \(bad): line 2: item 1, \"template\": the template holds no {width} placeholder\n")
    }

    @Test func theBundledExampleRuns() async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "examples/items.json"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 3)
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.contains("load original") })
    }

    @Test func jsonHasExactlyTheDocumentedKeys() async throws {
        let result = try await cli.run(["decide", "--item", "examples/items.json", "--network", "offline", "--cached", "thumbnail", "--json"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["action", "variant", "url", "rule", "reason", "network"])
            #expect(object["network"] as? String == "offline")
        }
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        #expect(last["action"] as? String == "placeholder")
        #expect(last["variant"] is NSNull)
        #expect(last["url"] is NSNull)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["action"] as? String == "show-cached")
        #expect(first["variant"] as? String == "thumbnail")
        #expect(first["url"] as? String == "https://images.example.com/sunset/thumbnail.jpg")
    }

    @Test func networkPrecedenceIsFlagThenEnvironmentThenDetection() async throws {
        let fromEnvironment = try await cli.run(["--item", "examples/item.json", "--json"], environment: ["IMGPOLICY_NETWORK": "cellular,expensive"])
        #expect(fromEnvironment.stdout.contains(#""network":"cellular,expensive""#))
        let flagWins = try await cli.run(["--item", "examples/item.json", "--json", "--network", "wifi"], environment: ["IMGPOLICY_NETWORK": "cellular"])
        #expect(flagWins.stdout.contains(#""network":"wifi""#))
        let badEnvironment = try await cli.run(["--item", "examples/item.json"], environment: ["IMGPOLICY_NETWORK": "5g"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.contains("IMGPOLICY_NETWORK=\"5g\""))
    }

    @Test func settingsDecideAndSetOverridesWithoutWriting() async throws {
        #expect(try await cli.run(["settings", "set", "alwaysDownloadOriginalImage", "true"]).status == 0)
        let stored = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--json"])
        #expect(stored.stdout.contains(#""rule":"cellular-always-original""#))
        let overridden = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--json", "--set", "alwaysDownloadOriginalImage=off"])
        #expect(overridden.stdout.contains(#""rule":"cellular-thumbnail""#))
        // --set wrote nothing.
        #expect(try String(contentsOfFile: cli.settingsPath, encoding: .utf8).contains("true"))
        let again = try await cli.run(["settings", "get", "alwaysDownloadOriginalImage"])
        #expect(again.stdout == "true\n")
    }

    @Test func policiesByNameAndFile() async throws {
        let byName = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--policy", "wifi-only", "--json"])
        #expect(byName.stdout.contains(#""action":"placeholder""#))
        let byFile = try await cli.run(["--network", "wifi", "--expensive", "--item", "examples/item.json", "--policy", "policies/low-data.json", "--json"])
        #expect(byFile.stdout.contains(#""rule":"saving-thumbnail""#))
    }

    @Test func explainListsTheRulesTried() async throws {
        let result = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--explain"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("rule 1 original-cached"))
        #expect(result.stdout.contains("no: the original is not cached"))
        #expect(result.stdout.contains("rule 4 cellular-thumbnail [network is cellular or unknown and has a thumbnail] yes: load thumbnail"))
        #expect(!result.stdout.contains("rule 5"))
        let json = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--explain", "--json"])
        #expect(json.stdout.split(separator: "\n").count == 1)
        #expect(json.stderr.contains("rule 4 cellular-thumbnail"))
    }

    @Test func readsItemsFromStandardInput() async throws {
        let result = try await cli.run(["--network", "offline", "--item", "-"], stdin: #"{"original": "https://a.example/o"}"#)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("placeholder (rule offline-placeholder"))
    }

    // MARK: - The network state, once per run

    /// A provider that counts how often its state is read, and changes its answer after the first read.
    final class CountingReachability: ReachabilityProviding, @unchecked Sendable {
        // Guards `reads`.
        private let reads = LockedList<Int>()
        var readCount: Int { reads.values.count }
        var currentState: NetworkState {
            reads.append(1)
            return NetworkState(reads.values.count == 1 ? .wifi : .cellular)
        }
        func stateChanges() -> AsyncStream<NetworkState> { AsyncStream { $0.finish() } }
    }

    @Test func everyItemOfARunIsDecidedWithOneReadingOfTheNetwork() async throws {
        let reachability = CountingReachability()
        let policy = ImagePolicy.default
        let decider = ItemDecider(policy: policy, settings: policy.resolveSettings([:]).settings, cache: StaticCacheContents.empty,
                                  reachability: reachability, expensive: true)
        let items = (0..<1_000).map { ImageItem(id: "\($0)", original: ImageURL("https://a.example/\($0)")!, thumbnail: ImageURL("https://a.example/t\($0)")) }
        let decisions = items.map { decider.decide($0) }
        #expect(reachability.readCount == 1)
        #expect(decisions.allSatisfy { $0.input.network == NetworkState(.wifi, isExpensive: true) })
        #expect(decider.reachability.currentState == NetworkState(.wifi, isExpensive: true))
    }

    // MARK: - Logging

    @Test func nothingIsLoggedByDefault() async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "examples/items.json"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
    }

    @Test func verboseLogsOneLinePerMessageToStandardError() async throws {
        let info = try await cli.run(["--network", "wifi", "--item", "examples/items.json", "-v"])
        #expect(info.status == 0)
        #expect(info.stderr.split(separator: "\n") == ["imgpolicy: info: network state read network=wifi"], "\(info.stderr)")
        let debug = try await cli.run(["--network", "wifi", "--item", "examples/items.json", "-vv"])
        #expect(debug.stderr.contains("imgpolicy: debug: items read count=3 file=examples/items.json\n"), "\(debug.stderr)")
        let trace = try await cli.run(["--network", "wifi", "--item", "examples/items.json", "--verbose", "--verbose", "--verbose"])
        #expect(trace.stderr.split(separator: "\n").filter { $0.hasPrefix("imgpolicy: trace: decided ") }.count == 3)
        // The decisions on standard output are the same with or without logging.
        #expect(trace.stdout == info.stdout)
    }

    @Test func theLevelCanComeFromTheEnvironment() async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "examples/items.json"], environment: ["IMGPOLICY_LOG_LEVEL": "DEBUG"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("imgpolicy: debug: items read"))
        #expect(!result.stderr.contains("trace"))
        let quiet = try await cli.run(["--network", "wifi", "--item", "examples/items.json"], environment: ["IMGPOLICY_LOG_LEVEL": "error"])
        #expect(quiet.stderr.isEmpty)
        let flagWins = try await cli.run(["--network", "wifi", "--item", "examples/items.json", "-v"], environment: ["IMGPOLICY_LOG_LEVEL": "error"])
        #expect(flagWins.stderr.contains("imgpolicy: info: "))
    }

    @Test func aBadLogLevelIsAUsageError() async throws {
        for arguments in [["--network", "wifi", "--item", "examples/item.json"], ["--network", "wifi", "--item", "examples/item.json", "-v"]] {
            let result = try await cli.run(arguments, environment: ["IMGPOLICY_LOG_LEVEL": "loud"])
            #expect(result.status == 64)
            #expect(result.stderr == "imgpolicy: IMGPOLICY_LOG_LEVEL=\"loud\" is not a log level (expected one of: trace, debug, info, notice, warning, error, critical)\n")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func logLinesEscapeControlCharacters() async throws {
        let item = try cli.home.write(#"{"original": "https://a.example/o"}"#, to: "a\u{1B}[2J\nb.json")
        let result = try await cli.run(["--network", "wifi", "--item", item, "-vv"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("file=\(cli.home.path)/a\\u{1B}[2J\\u{A}b.json\n"), "\(result.stderr)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    @Test func theLogHandlerWritesOneEscapedLineWithSortedMetadata() async {
        let lines = LockedList<String>()
        var logger = Logger(label: "test") { _ in StandardErrorLogHandler(level: .notice, write: { lines.append($0) }) }
        logger[metadataKey: "z"] = "last"
        logger.info("not written")
        logger.warning("cache write failed\n\u{1B}]0;x\u{7}", metadata: ["path": "/c/e\u{9B}", "a": "1"])
        #expect(lines.values == [#"imgpolicy: warning: cache write failed\u{A}\u{1B}]0;x\u{7} a=1 path=/c/e\u{9B} z=last"# + "\n"])
    }
}
