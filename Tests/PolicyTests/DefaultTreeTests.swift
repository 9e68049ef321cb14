import Policy
import Testing
import TestSupport

/// The whole truth table of the default tree (seed 004), written out: every network kind ×
/// alwaysDownloadOriginalImage × cached variants × thumbnail present (60 rows), each crossed with
/// the four combinations of the expensive and constrained flags, which the default tree ignores.
struct DefaultTreeTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var network: NetworkKind
        var alwaysOriginal: Bool
        var cached: CachedVariants
        var thumbnail: Bool
        var expect: String
        var rule: String

        init(_ network: NetworkKind, alwaysOriginal: Bool, cached: CachedVariants, thumbnail: Bool, expect: String, rule: String) {
            self.network = network
            self.alwaysOriginal = alwaysOriginal
            self.cached = cached
            self.thumbnail = thumbnail
            self.expect = expect
            self.rule = rule
        }

        var testDescription: String {
            "\(network) setting=\(alwaysOriginal) cached=\(cached) thumbnail=\(thumbnail) → \(expect)"
        }
    }

    struct Flags: Sendable, CustomTestStringConvertible {
        var expensive: Bool
        var constrained: Bool
        static let all = [Flags(expensive: false, constrained: false), Flags(expensive: true, constrained: false),
                          Flags(expensive: false, constrained: true), Flags(expensive: true, constrained: true)]
        var testDescription: String { "expensive=\(expensive) constrained=\(constrained)" }
    }

    static let rows: [Row] = [
        Row(.wifi, alwaysOriginal: false, cached: .none, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: false, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wifi, alwaysOriginal: false, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: false, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wifi, alwaysOriginal: false, cached: .none, thumbnail: false, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: false, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.wifi, alwaysOriginal: true, cached: .none, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: true, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wifi, alwaysOriginal: true, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: true, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wifi, alwaysOriginal: true, cached: .none, thumbnail: false, expect: "load original", rule: "wifi-original"),
        Row(.wifi, alwaysOriginal: true, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: false, cached: .none, thumbnail: true, expect: "load thumbnail", rule: "cellular-thumbnail"),
        Row(.cellular, alwaysOriginal: false, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: false, cached: .thumbnail, thumbnail: true, expect: "load thumbnail", rule: "cellular-thumbnail"),
        Row(.cellular, alwaysOriginal: false, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: false, cached: .none, thumbnail: false, expect: "load original", rule: "cellular-no-thumbnail"),
        Row(.cellular, alwaysOriginal: false, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: true, cached: .none, thumbnail: true, expect: "load original", rule: "cellular-always-original"),
        Row(.cellular, alwaysOriginal: true, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: true, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "cellular-always-original"),
        Row(.cellular, alwaysOriginal: true, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.cellular, alwaysOriginal: true, cached: .none, thumbnail: false, expect: "load original", rule: "cellular-always-original"),
        Row(.cellular, alwaysOriginal: true, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: false, cached: .none, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: false, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: false, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: false, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: false, cached: .none, thumbnail: false, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: false, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: true, cached: .none, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: true, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: true, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: true, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.wired, alwaysOriginal: true, cached: .none, thumbnail: false, expect: "load original", rule: "wifi-original"),
        Row(.wired, alwaysOriginal: true, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: false, cached: .none, thumbnail: true, expect: "placeholder", rule: "offline-placeholder"),
        Row(.offline, alwaysOriginal: false, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: false, cached: .thumbnail, thumbnail: true, expect: "show-cached thumbnail", rule: "offline-cached-thumbnail"),
        Row(.offline, alwaysOriginal: false, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: false, cached: .none, thumbnail: false, expect: "placeholder", rule: "offline-placeholder"),
        Row(.offline, alwaysOriginal: false, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: true, cached: .none, thumbnail: true, expect: "placeholder", rule: "offline-placeholder"),
        Row(.offline, alwaysOriginal: true, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: true, cached: .thumbnail, thumbnail: true, expect: "show-cached thumbnail", rule: "offline-cached-thumbnail"),
        Row(.offline, alwaysOriginal: true, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.offline, alwaysOriginal: true, cached: .none, thumbnail: false, expect: "placeholder", rule: "offline-placeholder"),
        Row(.offline, alwaysOriginal: true, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: false, cached: .none, thumbnail: true, expect: "load thumbnail", rule: "cellular-thumbnail"),
        Row(.unknown, alwaysOriginal: false, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: false, cached: .thumbnail, thumbnail: true, expect: "load thumbnail", rule: "cellular-thumbnail"),
        Row(.unknown, alwaysOriginal: false, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: false, cached: .none, thumbnail: false, expect: "load original", rule: "cellular-no-thumbnail"),
        Row(.unknown, alwaysOriginal: false, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: true, cached: .none, thumbnail: true, expect: "load original", rule: "cellular-always-original"),
        Row(.unknown, alwaysOriginal: true, cached: .original, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: true, cached: .thumbnail, thumbnail: true, expect: "load original", rule: "cellular-always-original"),
        Row(.unknown, alwaysOriginal: true, cached: .both, thumbnail: true, expect: "show-cached original", rule: "original-cached"),
        Row(.unknown, alwaysOriginal: true, cached: .none, thumbnail: false, expect: "load original", rule: "cellular-always-original"),
        Row(.unknown, alwaysOriginal: true, cached: .original, thumbnail: false, expect: "show-cached original", rule: "original-cached"),
    ]

    static let fromFile: ImagePolicy = {
        do { return try ImagePolicy.load(contentsOf: PackagePaths.policies + "/default.json") }
        catch { fatalError("policies/default.json does not load: \(error)") }
    }()

    @Test("the default tree decides as written", arguments: rows, Flags.all)
    func defaultTree(row: Row, flags: Flags) throws {
        let original = ImageURL("https://img.example/o.jpg")!
        let thumbnail = ImageURL("https://img.example/t.jpg")!
        let item = ImageItem(id: "x", original: original, thumbnail: row.thumbnail ? thumbnail : nil)
        var urls: Set<ImageURL> = []
        if row.cached.has(.original) { urls.insert(original) }
        if row.cached.has(.thumbnail) { urls.insert(thumbnail) }
        let store = InMemorySettingsStore([ImagePolicy.alwaysDownloadOriginalImage: .bool(row.alwaysOriginal)])
        let network = NetworkState(row.network, isExpensive: flags.expensive, isConstrained: flags.constrained)

        for policy in [ImagePolicy.default, Self.fromFile] {
            let decision = try policy.decide(item, network: network, settings: store, cache: StaticCacheContents(urls: urls))
            let words = row.expect.split(separator: " ").map(String.init)
            #expect(decision.action.kind.rawValue == words[0])
            #expect(decision.variant?.rawValue == words.dropFirst().first)
            #expect(decision.url == decision.variant.flatMap { item.url(of: $0) })
            #expect(decision.rule == row.rule)
            #expect(decision.network == network)
            #expect(!decision.reason.isEmpty)
        }
    }

    @Test func theTableCoversEveryInput() {
        // 5 kinds × 2 settings × (4 cache states with a thumbnail + 2 without) = 60 distinct rows.
        let keys = Set(Self.rows.map { "\($0.network)-\($0.alwaysOriginal)-\($0.cached.rawValue)-\($0.thumbnail)" })
        #expect(keys.count == 60)
        #expect(ImagePolicy.default.truthTable().count == 60 * Flags.all.count)
    }

    @Test("roaming is cellular to the default tree, captive is offline", arguments: rows)
    func roamingAndCaptive(row: Row) throws {
        let policy = ImagePolicy.default
        var bits: UInt16 = 0
        if row.alwaysOriginal { bits = 1 }
        let input = PolicyInput(network: NetworkState(row.network), cached: row.cached, hasThumbnail: row.thumbnail,
                                settings: ResolvedSettings(bits: bits))
        var roaming = input
        roaming.network = NetworkState(row.network, isRoaming: true)
        #expect(policy.outcome(for: roaming) == policy.outcome(for: input), "\(roaming)")
        var captive = input
        captive.network.isCaptive = true
        var offline = input
        offline.network.kind = .offline
        #expect(policy.outcome(for: captive) == policy.outcome(for: offline), "\(captive)")
        #expect(policy.explain(captive).last?.rule.name == policy.rules[policy.outcome(for: offline).ruleIndex].name)
    }

    @Test func theBuiltInDefaultIsPoliciesDefaultJSON() {
        let builtIn = ImagePolicy.default
        let file = Self.fromFile
        #expect(builtIn.name == file.name)
        #expect(builtIn.summary == file.summary)
        #expect(builtIn.settings == file.settings)
        #expect(builtIn.rules == file.rules)
        let builtInTable = builtIn.truthTable().map { "\($0.input) \($0.input.settings.bits) \($0.outcome)" }
        let fileTable = file.truthTable().map { "\($0.input) \($0.input.settings.bits) \($0.outcome)" }
        #expect(builtInTable == fileTable)
        // The prefetch section and the running-loads option too (entries compared without their lines).
        #expect(builtIn.prefetch.map { [$0.name ?? "", $0.condition.summary, "\($0.plan)"] }
                == file.prefetch.map { [$0.name ?? "", $0.condition.summary, "\($0.plan)"] })
        #expect(builtIn.prefetch.map(\.condition) == file.prefetch.map(\.condition))
        #expect(builtIn.runningLoadsOnWorseNetwork.map { "\($0.condition.summary) \($0.runningLoads)" }
                == file.runningLoadsOnWorseNetwork.map { "\($0.condition.summary) \($0.runningLoads)" })
        #expect(builtIn.networkStatePlans() == file.networkStatePlans())
    }

    @Test func aMissingThumbnailOnCellularLoadsTheOriginalAndSaysSo() throws {
        let item = ImageItem(original: ImageURL("https://img.example/o.jpg")!)
        let decision = ImagePolicy.default.decide(item, network: NetworkState(.cellular),
                                                  settings: ImagePolicy.default.defaultSettings, cache: StaticCacheContents.empty)
        #expect(decision.action == .load(.original, item.original))
        #expect(decision.reason.contains("has none"))
    }

    @Test func aStoredStringForTheSettingIsAnErrorNotFalse() {
        let store = InMemorySettingsStore([ImagePolicy.alwaysDownloadOriginalImage: .string("yes")])
        let item = ImageItem(original: ImageURL("https://img.example/o.jpg")!)
        #expect {
            _ = try ImagePolicy.default.decide(item, network: NetworkState(.cellular), settings: store, cache: StaticCacheContents.empty)
        } throws: { error in
            guard let error = error as? DataFileError else { return false }
            return error.code == .wrongType && error.description.contains("alwaysDownloadOriginalImage")
                && error.description.contains("in-memory settings")
        }
    }
}
