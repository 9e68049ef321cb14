import Policy
import Testing

/// `RuleCondition` keeps its network kinds, settings and cached variants as masks and a sorted
/// array (docs/startup.md); its public properties still read and write sets and dictionaries.
/// These tests hold the two views to each other: what is set is what is read, equality does not
/// depend on the order things were set in, and the words (`summary`, `mismatch`) are unchanged.
struct RuleConditionTests {
    @Test func networksReadBackAsSetAndEmptyIsNotAny() {
        var condition = RuleCondition()
        #expect(condition.networks == nil)
        condition.networks = [.unknown, .wifi]
        #expect(condition.networks == [.wifi, .unknown])
        condition.networks = []
        #expect(condition.networks == Set<NetworkKind>())
        #expect(!condition.isCatchAll)
        condition.networks = nil
        #expect(condition.networks == nil)
        #expect(condition.isCatchAll)
        for kind in NetworkKind.allCases {
            #expect(RuleCondition(networks: [kind]).networks == [kind])
        }
    }

    @Test func settingsAndCachedReadBackAsDictionaries() {
        var condition = RuleCondition(settings: ["b": false, "a": true], cached: [.thumbnail: false])
        #expect(condition.settings == ["a": true, "b": false])
        #expect(condition.cached == [.thumbnail: false])
        condition.settings["c"] = true
        condition.settings["a"] = false
        condition.cached[.original] = true
        #expect(condition.settings == ["a": false, "b": false, "c": true])
        #expect(condition.cached == [.original: true, .thumbnail: false])
        condition.settings["b"] = nil
        condition.cached[.thumbnail] = nil
        #expect(condition.settings == ["a": false, "c": true])
        #expect(condition.cached == [.original: true])
        condition.settings = [:]
        condition.cached = [:]
        #expect(condition.isCatchAll)
    }

    @Test func equalityAndHashIgnoreTheOrderThingsWereSetIn() {
        var first = RuleCondition()
        first.settings["z"] = true
        first.settings["a"] = false
        first.cached[.thumbnail] = true
        first.cached[.original] = false
        var second = RuleCondition(settings: ["a": false])
        second.cached = [.original: false, .thumbnail: true]
        second.settings["z"] = true
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        second.settings["z"] = false
        #expect(first != second)
        #expect(RuleCondition(networks: []) != RuleCondition(networks: nil))
    }

    @Test func wordsListKindsInTheirOrderAndSettingsByKey() {
        let condition = RuleCondition(networks: [.unknown, .cellular], settings: ["zoom": true, "hd": false],
                                      cached: [.thumbnail: true, .original: false])
        #expect(condition.summary
                == "network is cellular or unknown and hd is off and zoom is on and original not cached and thumbnail cached")
        let input = PolicyInput(network: NetworkState(.wifi), cached: .thumbnail, hasThumbnail: true,
                                settings: ResolvedSettings(bits: 0))
        #expect(condition.mismatch(for: input, settingValue: { _ in false }) == "network is wifi, not cellular or unknown")
        let onCellular = PolicyInput(network: NetworkState(.cellular), cached: .thumbnail, hasThumbnail: true,
                                     settings: ResolvedSettings(bits: 0))
        #expect(condition.mismatch(for: onCellular, settingValue: { _ in false }) == "setting zoom is off")
        #expect(condition.mismatch(for: onCellular, settingValue: { $0 == "zoom" }) == nil)
    }

    @Test func aCaseSettingsReadBackAsADictionary() {
        var policyCase = PolicyCase(network: NetworkState(.wifi), settings: ["b": true, "a": false], expect: .placeholder)
        #expect(policyCase.settings == ["a": false, "b": true])
        policyCase.settings["a"] = true
        #expect(policyCase.settings == ["a": true, "b": true])
        #expect(policyCase == PolicyCase(network: NetworkState(.wifi), settings: ["a": true, "b": true], expect: .placeholder))
    }
}
