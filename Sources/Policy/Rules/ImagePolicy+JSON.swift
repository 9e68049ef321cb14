import Support
extension ImagePolicy {
    /// Loads, validates and compiles the policy file at `path`. The policy's name is the file name
    /// without `.json`.
    ///
    /// - Throws: `DataFileError`: `.notFound`, `.unreadable`, `.malformed` (not JSON), or
    ///   `.invalid` naming the rule and what is wrong. Never traps, whatever the file holds.
    public static func load(contentsOf path: String) throws(DataFileError) -> ImagePolicy {
        let bytes = try DataFileReader.read(path)
        var name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasSuffix(".json") { name.removeLast(5) }
        return try ImagePolicy(json: bytes, name: name, source: path)
    }

    /// Reads a policy from its JSON text. See `policies/README.md` for the format.
    ///
    /// - Parameters:
    ///   - bytes: the JSON text.
    ///   - name: the policy's name.
    ///   - source: the file name for error messages.
    public init(json bytes: some Collection<UInt8>, name: String, source: String) throws(DataFileError) {
        let document = try JSONParser().parse(bytes, source: source)
        let reader = try JSONObjectReader(document, source: source, what: "the policy",
                                          keys: ["description", "settings", "rules", "prefetch", "runningLoadsOnWorseNetwork", "slowBelow",
                                                 "revalidateStale", "retryOnCostlyLink", "cases"])
        let summary = try reader.string("description") ?? ""
        var declarations: [SettingDeclaration] = []
        for member in try reader.object("settings") ?? [] {
            guard case .bool(let value) = member.value.kind else {
                throw DataFileError(.invalid, source: source, line: member.value.line, context: "settings",
                                    message: "the default of \"\(member.key)\" must be true or false, found \(member.value.typeDescription)")
            }
            declarations.append(SettingDeclaration(member.key, default: value))
        }
        guard let ruleValues = try reader.array("rules") else { throw reader.error("\"rules\" is missing") }
        var rules: [PolicyRule] = []
        for (index, value) in ruleValues.enumerated() {
            rules.append(try Self.rule(from: value, source: source, context: "rule \(index + 1)"))
        }
        var prefetch: [PrefetchRule] = []
        for (index, value) in (try reader.array("prefetch") ?? []).enumerated() {
            prefetch.append(try Self.prefetchRule(from: value, source: source, index: index))
        }
        var runningLoads: [RunningLoadsRule] = []
        if let optionValue = reader.value("runningLoadsOnWorseNetwork") {
            runningLoads = try Self.runningLoadsRules(from: optionValue, reader: reader)
        }
        let slowBelow = try reader.value("slowBelow").map { value throws(DataFileError) in
            try Self.slowLinkThreshold(from: value, source: source)
        }
        let revalidationValue = reader.value("revalidateStale")
        let staleRevalidation = try reader.string("revalidateStale").map { text throws(DataFileError) -> StaleRevalidation in
            guard let choice = StaleRevalidation(rawValue: text) else {
                throw reader.error("\"revalidateStale\" must be \(quotedList(StaleRevalidation.allCases.map(\.rawValue))), "
                                   + "found \(JSONWriter.quoted(text))", at: revalidationValue)
            }
            return choice
        }
        let retriesValue = reader.value("retryOnCostlyLink")
        let costlyLinkRetries = try reader.string("retryOnCostlyLink").map { text throws(DataFileError) -> RetryScope in
            guard let choice = RetryScope(rawValue: text) else {
                throw reader.error("\"retryOnCostlyLink\" must be \(quotedList(RetryScope.allCases.map(\.rawValue))), "
                                   + "found \(JSONWriter.quoted(text))", at: retriesValue)
            }
            return choice
        }
        var cases: [PolicyCase] = []
        for (index, value) in (try reader.array("cases") ?? []).enumerated() {
            cases.append(try Self.policyCase(from: value, source: source, context: "case \(index + 1)"))
        }
        try self.init(name: name, summary: summary, settings: declarations, rules: rules, cases: cases, prefetch: prefetch,
                      runningLoadsOnWorseNetwork: runningLoads, slowBelow: slowBelow, staleRevalidation: staleRevalidation,
                      costlyLinkRetries: costlyLinkRetries, source: source, ruleLines: ruleValues.map(\.line))
    }

    private static func prefetchRule(from value: JSONValue, source: String, index: Int) throws(DataFileError) -> PrefetchRule {
        let context = named("prefetch entry \(index + 1)", value)
        let reader = try JSONObjectReader(value, source: source, context: context, what: "a prefetch entry",
                                          keys: ["name", "when", "ahead", "behind", "variants"])
        let name = try reader.string("name")
        let condition = try reader.value("when").map { when throws(DataFileError) in
            try stateCondition(from: when, source: source, context: context, what: "a prefetch plan")
        } ?? .always
        return PrefetchRule(name, when: condition, plan: try plan(reader: reader), line: value.line)
    }

    /// `ahead`, `behind` (whole numbers of rows, default 0) and `variants` (default `decided`).
    private static func plan(reader: JSONObjectReader) throws(DataFileError) -> PrefetchPlan {
        let variantsValue = reader.value("variants")
        let variants = try reader.string("variants").map { name throws(DataFileError) -> PrefetchPlan.Variants in
            guard let variants = PrefetchPlan.Variants(rawValue: name) else {
                throw reader.error("unknown variants \(JSONWriter.quoted(name)) (expected \(quotedList(PrefetchPlan.Variants.allCases.map(\.rawValue))))",
                                   at: variantsValue)
            }
            return variants
        } ?? .decided
        return PrefetchPlan(ahead: try rowCount("ahead", reader: reader), behind: try rowCount("behind", reader: reader), variants: variants)
    }

    /// A whole number of rows from 0 to `PrefetchPlan.maximumRows`; 0 when absent.
    private static func rowCount(_ key: String, reader: JSONObjectReader) throws(DataFileError) -> Int {
        guard let value = reader.value(key) else { return 0 }
        guard case .number(let text) = value.kind else {
            throw reader.error("\"\(key)\" must be a whole number of rows, found \(value.typeDescription)", at: value)
        }
        let shown = text.count > 24 ? String(text.prefix(24)) + "…" : text
        if text.hasPrefix("-") {
            throw reader.error("\"\(key)\" is \(shown): a row count cannot be negative", at: value)
        }
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw reader.error("\"\(key)\" must be a whole number of rows, found \(shown)", at: value)
        }
        let digits = text.drop { $0 == "0" }
        guard digits.count <= 4, let count = Int(digits.isEmpty ? "0" : String(digits)), count <= PrefetchPlan.maximumRows else {
            throw reader.error("\"\(key)\" is \(shown) rows, at most \(PrefetchPlan.maximumRows) are allowed", at: value)
        }
        return count
    }

    /// `{"bytesPerSecond": 51200}`: a whole number from 1 to `SlowLinkThreshold.maximumBytesPerSecond`.
    private static func slowLinkThreshold(from value: JSONValue, source: String) throws(DataFileError) -> SlowLinkThreshold {
        let reader = try JSONObjectReader(value, source: source, context: "slowBelow", what: "\"slowBelow\"", keys: ["bytesPerSecond"])
        guard let rate = reader.value("bytesPerSecond") else { throw reader.error("\"bytesPerSecond\" is missing") }
        guard case .number(let text) = rate.kind else {
            throw reader.error("\"bytesPerSecond\" must be a whole number, found \(rate.typeDescription)", at: rate)
        }
        let shown = text.count > 24 ? String(text.prefix(24)) + "…" : text
        let maximum = SlowLinkThreshold.maximumBytesPerSecond
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw reader.error("\"bytesPerSecond\" must be a whole number from 1 to \(maximum), found \(shown)", at: rate)
        }
        let digits = text.drop { $0 == "0" }
        guard digits.count <= 13, let bytes = Int(digits.isEmpty ? "0" : String(digits)), (1...maximum).contains(bytes) else {
            throw reader.error("\"bytesPerSecond\" is \(shown): it must be from 1 to \(maximum)", at: rate)
        }
        return SlowLinkThreshold(bytesPerSecond: bytes)
    }

    /// A case's `"throughput"`: bytes per second, a finite number from 0 to 10^15.
    private static func throughput(reader: JSONObjectReader) throws(DataFileError) -> LinkEstimate? {
        guard let value = reader.value("throughput") else { return nil }
        guard case .number(let text) = value.kind else {
            throw reader.error("\"throughput\" must be a number of bytes per second, found \(value.typeDescription)", at: value)
        }
        let shown = text.count > 24 ? String(text.prefix(24)) + "…" : text
        guard let bytes = Double(text), bytes.isFinite, bytes >= 0, bytes <= 1e15 else {
            throw reader.error("\"throughput\" is \(shown): it must be from 0 to 1000000000000000 bytes per second", at: value)
        }
        return LinkEstimate(bytesPerSecond: bytes)
    }

    /// `"cancel"`, `"finish"`, or an array of `{"when": {…}, "then": "cancel"|"finish"}`.
    private static func runningLoadsRules(from value: JSONValue, reader: JSONObjectReader) throws(DataFileError) -> [RunningLoadsRule] {
        switch value.kind {
        case .string(let text):
            return [RunningLoadsRule(then: try runningLoads(text, at: value, reader: reader), line: value.line)]
        case .array(let elements):
            var entries: [RunningLoadsRule] = []
            for (index, element) in elements.enumerated() {
                let context = "runningLoadsOnWorseNetwork entry \(index + 1)"
                let entry = try JSONObjectReader(element, source: reader.source, context: context, what: "an entry", keys: ["when", "then"])
                let condition = try entry.value("when").map { when throws(DataFileError) in
                    try stateCondition(from: when, source: reader.source, context: context, what: "the running-loads choice")
                } ?? .always
                let choice = try runningLoads(try entry.requiredString("then"), at: entry.value("then"), reader: entry)
                entries.append(RunningLoadsRule(when: condition, then: choice, line: element.line))
            }
            return entries
        default:
            throw reader.error("\"runningLoadsOnWorseNetwork\" must be \(quotedList(RunningLoads.allCases.map(\.rawValue))) "
                               + "or an array of entries, found \(value.typeDescription)", at: value)
        }
    }

    private static func runningLoads(_ text: String, at value: JSONValue?, reader: JSONObjectReader) throws(DataFileError) -> RunningLoads {
        guard let choice = RunningLoads(rawValue: text) else {
            throw reader.error("unknown running-loads choice \(JSONWriter.quoted(text)) (expected \(quotedList(RunningLoads.allCases.map(\.rawValue))))",
                               at: value)
        }
        return choice
    }

    /// A `when` that may test only the network state and the settings.
    private static func stateCondition(from value: JSONValue, source: String, context: String,
                                       what: String) throws(DataFileError) -> RuleCondition {
        if case .object(let members) = value.kind,
           let member = members.first(where: { $0.key == "slow" }) {
            throw DataFileError(.invalid, source: source, line: member.value.line, context: context,
                                message: PolicyValidator.slowInStateCondition(what))
        }
        if case .object(let members) = value.kind,
           let member = members.first(where: { ["cached", "hasThumbnail", "thumbnailCoversDisplay"].contains($0.key) }) {
            throw DataFileError(.invalid, source: source, line: member.value.line, context: context,
                                message: "\"when\" tests \"\(member.key)\", which is about one item, but \(what) is for a whole list "
                                    + "(it may test \(quotedList(PolicyValidator.stateConditionKeys)))")
        }
        return try condition(from: value, source: source, context: context)
    }

    private static func rule(from value: JSONValue, source: String, context: String) throws(DataFileError) -> PolicyRule {
        // Name the rule in every message about it, when it has a name.
        let context = named(context, value)
        let reader = try JSONObjectReader(value, source: source, context: context, what: "a rule",
                                          keys: ["name", "when", "action", "variant", "rung", "reason"])
        let name = try reader.requiredString("name")
        var condition = RuleCondition()
        if let when = reader.value("when") {
            condition = try self.condition(from: when, source: source, context: context)
        }
        if let rungValue = reader.value("rung") {
            let rung = try rungSelection(rungValue, reader: reader)
            return PolicyRule(name, when: condition, choosing: rung, reason: try reader.requiredString("reason"))
        }
        let action = try self.action(reader: reader)
        let reason = try reader.requiredString("reason")
        return PolicyRule(name, when: condition, then: action, reason: reason)
    }

    private static func action(reader: JSONObjectReader) throws(DataFileError) -> RuleAction {
        let actionValue = reader.value("action")
        let actionName = try reader.requiredString("action")
        guard let kind = ActionKind(rawValue: actionName) else {
            throw reader.error("unknown action \"\(actionName)\" (expected \(quotedList(ActionKind.allCases.map(\.rawValue))))",
                               at: actionValue)
        }
        let variantValue = reader.value("variant")
        let variant = try reader.string("variant").map { name throws(DataFileError) -> Variant in
            guard let variant = Variant(rawValue: name) else {
                throw reader.error("unknown variant \"\(name)\" (expected \"original\" or \"thumbnail\")", at: variantValue)
            }
            return variant
        }
        switch (kind, variant) {
        case (.showCached, let variant?): return .showCached(variant)
        case (.load, let variant?): return .load(variant)
        case (.placeholder, nil): return .placeholder
        case (.placeholder, _?): throw reader.error("the placeholder action takes no \"variant\"", at: variantValue)
        default: throw reader.error("the action \"\(kind)\" needs a \"variant\" (\"original\" or \"thumbnail\")", at: actionValue)
        }
    }

    private static func condition(from value: JSONValue, source: String, context: String) throws(DataFileError) -> RuleCondition {
        let reader = try JSONObjectReader(value, source: source, context: context, what: "\"when\"",
                                          keys: ["network", "expensive", "constrained", "roaming", "captive", "settings", "cached", "hasThumbnail",
                                                 "thumbnailCoversDisplay", "slow"])
        var condition = RuleCondition()
        if let networkValue = reader.value("network") {
            condition.requireNetworks(bits: try networkKinds(networkValue, reader: reader))
        }
        condition.expensive = try reader.bool("expensive")
        condition.constrained = try reader.bool("constrained")
        condition.roaming = try reader.bool("roaming")
        condition.captive = try reader.bool("captive")
        condition.hasThumbnail = try reader.bool("hasThumbnail")
        condition.thumbnailCoversDisplay = try reader.bool("thumbnailCoversDisplay")
        condition.slow = try reader.bool("slow")
        for member in try reader.object("settings") ?? [] {
            guard case .bool(let wanted) = member.value.kind else {
                throw reader.error("setting \"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            condition.requireSetting(member.key, wanted)
        }
        for member in try reader.object("cached") ?? [] {
            guard case .bool(let wanted) = member.value.kind else {
                throw reader.error("\"cached\".\"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            switch member.key {
            case "covering": condition.coveringRungCached = wanted
            case "any": condition.anyRungCached = wanted
            default:
                guard let variant = Variant(rawValue: member.key) else {
                    throw reader.error("unknown key \"\(member.key)\" in \"cached\" (expected \"original\", \"thumbnail\", "
                                       + "\"covering\" or \"any\")", at: member.value)
                }
                condition.requireCached(variant, wanted)
            }
        }
        return condition
    }

    /// The kinds `"network"` names, one bit per `NetworkKind.index`.
    private static func networkKinds(_ value: JSONValue, reader: JSONObjectReader) throws(DataFileError) -> UInt8 {
        let names: [JSONValue]
        switch value.kind {
        case .string: names = [value]
        case .array(let elements): names = elements
        default: throw reader.error("\"network\" must be a network kind or an array of them, found \(value.typeDescription)", at: value)
        }
        var kinds: UInt8 = 0
        for name in names {
            guard case .string(let text) = name.kind else {
                throw reader.error("\"network\" must list strings, found \(name.typeDescription)", at: name)
            }
            guard let kind = NetworkKind(rawValue: text) else {
                throw reader.error("unknown network kind \"\(text)\" (expected \(quotedList(NetworkKind.allCases.map(\.rawValue))))", at: name)
            }
            kinds |= kind.bit
        }
        return kinds
    }

    private static func policyCase(from value: JSONValue, source: String, context: String) throws(DataFileError) -> PolicyCase {
        let reader = try JSONObjectReader(value, source: source, context: context, what: "a case",
                                          keys: ["name", "network", "expensive", "constrained", "roaming", "captive", "settings", "cached",
                                                 "hasThumbnail", "thumbnailCoversDisplay", "throughput", "displayWidth", "ladder", "cachedWidths",
                                                 "expect"])
        let name = try reader.string("name")
        let networkValue = reader.value("network")
        let networkName = try reader.requiredString("network")
        guard let kind = NetworkKind(rawValue: networkName) else {
            throw reader.error("unknown network kind \"\(networkName)\" (expected \(quotedList(NetworkKind.allCases.map(\.rawValue))))",
                               at: networkValue)
        }
        let network = NetworkState(kind, isExpensive: try reader.bool("expensive") ?? false,
                                   isConstrained: try reader.bool("constrained") ?? false,
                                   isRoaming: try reader.bool("roaming") ?? false, isCaptive: try reader.bool("captive") ?? false)
        var settings: [SettingRequirement] = []
        for member in try reader.object("settings") ?? [] {
            guard case .bool(let value) = member.value.kind else {
                throw reader.error("setting \"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            settings.set(member.key, value)
        }
        var cached: CachedVariants = []
        for element in try reader.array("cached") ?? [] {
            guard case .string(let text) = element.kind, let variant = Variant(rawValue: text) else {
                throw reader.error("\"cached\" must list \"original\" and/or \"thumbnail\"", at: element)
            }
            cached.insert(CachedVariants(variant))
        }
        let hasThumbnail = try reader.bool("hasThumbnail") ?? true
        let covers = try reader.bool("thumbnailCoversDisplay") ?? false
        if covers && !hasThumbnail {
            throw reader.error("\"thumbnailCoversDisplay\" is true but \"hasThumbnail\" is false", at: reader.value("thumbnailCoversDisplay"))
        }
        let estimate = try throughput(reader: reader)
        guard let expectValue = reader.value("expect") else { throw reader.error("\"expect\" is missing") }
        let expect = try JSONObjectReader(expectValue, source: source, context: context, what: "\"expect\"",
                                          keys: ["action", "variant", "rule", "rungWidth", "prefetch", "runningLoads", "revalidatesStale"])
        let ladder = try caseLadder(reader: reader, expect: expect)
        // A case about a ladder checks the rule and the rung; its action needs no variant.
        let checksDecision = ["action", "variant", "rule"].contains { expect.value($0) != nil } && ladder == nil
        let action = checksDecision ? try self.action(reader: expect) : nil
        let rule = try expect.string("rule")
        let prefetch = try expect.value("prefetch").map { planValue throws(DataFileError) -> PrefetchPlan in
            if case .string(let text) = planValue.kind {
                guard text == "nothing" else {
                    throw expect.error("\"prefetch\" must be \"nothing\" or an object with \"ahead\", \"behind\" and \"variants\", "
                                       + "found \(JSONWriter.quoted(text))", at: planValue)
                }
                return .nothing
            }
            return try plan(reader: JSONObjectReader(planValue, source: source, context: context, what: "\"prefetch\"",
                                                     keys: ["ahead", "behind", "variants"]))
        }
        let runningLoadsValue = expect.value("runningLoads")
        let runningLoads = try expect.string("runningLoads").map { text throws(DataFileError) in
            try self.runningLoads(text, at: runningLoadsValue, reader: expect)
        }
        let revalidates = try expect.bool("revalidatesStale")
        if action == nil && ladder == nil && prefetch == nil && runningLoads == nil && revalidates == nil {
            throw expect.error("\"expect\" must hold \"action\", \"prefetch\" or \"runningLoads\" (or \"revalidatesStale\")")
        }
        var policyCase = PolicyCase(name: name, network: network, cached: cached, hasThumbnail: hasThumbnail,
                                    thumbnailCoversDisplay: covers, estimate: estimate, expect: action, rule: rule, prefetch: prefetch,
                                    runningLoads: runningLoads, line: value.line)
        policyCase.settingValues = settings
        policyCase.expectedStaleRevalidation = revalidates
        policyCase.ladder = ladder
        return policyCase
    }
}

/// `context` followed by ` ("name")` when `value` is an object with a string `name`.
private func named(_ context: String, _ value: JSONValue) -> String {
    guard case .object(let members) = value.kind, let nameValue = members.first(where: { $0.key == "name" })?.value,
          case .string(let text) = nameValue.kind else { return context }
    return context + " (\"\(text)\")"
}

func quotedList(_ names: [String]) -> String {
    names.map { "\"\($0)\"" }.joined(separator: ", ")
}
