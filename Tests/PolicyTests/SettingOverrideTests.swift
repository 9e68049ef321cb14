import Policy
import Testing

/// Overriding a setting by its key (`ResolvedSettings.overriding`, `SettingOverride`): the bit
/// of that key changes and no other, an unknown key is an error naming it, the policy and the keys
/// it reads, and `key=value` text is checked in the order the command reports it.
struct SettingOverrideTests {
    /// Two settings, `a` (default off) and `b` (default on), both read by a rule.
    static let policy: ImagePolicy = {
        do {
            return try ImagePolicy(name: "two", settings: [SettingDeclaration("a", default: false), SettingDeclaration("b", default: true)],
                                   rules: [PolicyRule("a", when: RuleCondition(settings: ["a": true]), then: .load(.original), reason: "a on"),
                                           PolicyRule("b", when: RuleCondition(settings: ["b": true], hasThumbnail: true), then: .load(.thumbnail), reason: "b on"),
                                           PolicyRule("end", then: .placeholder, reason: "neither")])
        } catch {
            fatalError("\(error)")
        }
    }()

    static let noSettings: ImagePolicy = {
        do {
            return try ImagePolicy(name: "plain", settings: [], rules: [PolicyRule("end", then: .placeholder, reason: "r")])
        } catch {
            fatalError("\(error)")
        }
    }()

    @Test(arguments: [("a", true), ("a", false), ("b", true), ("b", false)])
    func overridingAKeySetsItsBitAndNoOther(key: String, value: Bool) throws {
        let policy = Self.policy
        let defaults = policy.defaultSettings
        let other = key == "a" ? "b" : "a"
        let overridden = try defaults.overriding(key, with: value, in: policy)
        #expect(overridden.isOn(key, in: policy) == value)
        #expect(overridden.isOn(other, in: policy) == defaults.isOn(other, in: policy))
        #expect(overridden.isOn("c", in: policy) == nil)
    }

    @Test func theOverridesDecide() throws {
        let policy = Self.policy
        let item = ImageItem(original: try #require(ImageURL("https://images.example.com/o.jpg")),
                             thumbnail: ImageURL("https://images.example.com/t.jpg"))
        let wifi = NetworkState(.wifi)
        #expect(policy.decide(item, network: wifi, settings: policy.defaultSettings, cached: []).rule == "b")
        let both = try policy.defaultSettings.overriding([SettingOverride("a", true), SettingOverride("b", false)], in: policy)
        #expect(policy.decide(item, network: wifi, settings: both, cached: []).rule == "a")
        let neither = try both.overriding("a", with: false, in: policy)
        #expect(policy.decide(item, network: wifi, settings: neither, cached: []).rule == "end")
    }

    @Test func aLaterOverrideOfTheSameKeyWins() throws {
        let policy = Self.policy
        let settings = try policy.defaultSettings.overriding([SettingOverride("a", true), SettingOverride("a", false)], in: policy)
        #expect(settings == policy.defaultSettings)
    }

    @Test func anUnknownKeyNamesItselfThePolicyAndTheKeysItReads() {
        let policy = Self.policy
        #expect {
            try policy.defaultSettings.overriding("alwaysDownloadOriginalImage", with: true, in: policy)
        } throws: { error in
            guard let error = error as? SettingOverrideError else { return false }
            return error.kind == .unknownKey && error.key == "alwaysDownloadOriginalImage" && error.policyName == "two"
                && error.knownKeys == ["a", "b"] && error.text == nil
                && error.description == #"the policy "two" reads no setting "alwaysDownloadOriginalImage" (it reads: a, b)"#
        }
        #expect {
            try Self.noSettings.defaultSettings.overriding([SettingOverride("a", true)], in: Self.noSettings)
        } throws: { error in
            (error as? SettingOverrideError)?.description == #"the policy "plain" reads no setting "a" (it reads: none)"#
        }
    }

    @Test(arguments: [("a=on", true), ("a=TRUE", true), ("a=yes", true), ("a=1", true), ("b=off", false), ("b=False", false),
                      ("b=no", false), ("b=0", false)])
    func parsingReadsTheWordsPeopleUse(text: String, value: Bool) throws {
        let override = try SettingOverride(parsing: text, in: Self.policy)
        #expect(override.key == String(text.prefix(1)))
        #expect(override.value == value)
        #expect(override.description == "\(override.key)=\(value)")
    }

    /// The first thing wrong is reported: no `=`, then the key, then the value (so that
    /// `c=maybe` names the unknown key, as the command always has).
    @Test(arguments: [
        ("a", SettingOverrideError.Kind.malformed, "expected key=value"),
        ("", .malformed, "expected key=value"),
        ("c=maybe", .unknownKey, #"the policy "two" reads no setting "c" (it reads: a, b)"#),
        ("=1", .unknownKey, #"the policy "two" reads no setting "" (it reads: a, b)"#),
        ("a=maybe", .notBoolean, #""maybe" is not a boolean (true/false, yes/no, on/off, 1/0)"#),
        ("a=", .notBoolean, #""" is not a boolean (true/false, yes/no, on/off, 1/0)"#),
        ("a=on=off", .notBoolean, #""on=off" is not a boolean (true/false, yes/no, on/off, 1/0)"#),
    ])
    func parsingErrorsComeInTheOrderTheCommandReportsThem(text: String, kind: SettingOverrideError.Kind, message: String) {
        #expect {
            try SettingOverride(parsing: text, in: Self.policy)
        } throws: { error in
            guard let error = error as? SettingOverrideError else { return false }
            return error.kind == kind && error.description == message && error.text == text
        }
    }
}
