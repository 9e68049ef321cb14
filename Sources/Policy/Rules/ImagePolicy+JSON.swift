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
                                          keys: ["description", "settings", "rules", "cases"])
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
        var cases: [PolicyCase] = []
        for (index, value) in (try reader.array("cases") ?? []).enumerated() {
            cases.append(try Self.policyCase(from: value, source: source, context: "case \(index + 1)"))
        }
        try self.init(name: name, summary: summary, settings: declarations, rules: rules, cases: cases,
                      source: source, ruleLines: ruleValues.map(\.line))
    }

    private static func rule(from value: JSONValue, source: String, context: String) throws(DataFileError) -> PolicyRule {
        // Name the rule in every message about it, when it has a name.
        var context = context
        if case .object(let members) = value.kind, let nameValue = members.first(where: { $0.key == "name" })?.value,
           case .string(let text) = nameValue.kind {
            context += " (\"\(text)\")"
        }
        let reader = try JSONObjectReader(value, source: source, context: context, what: "a rule",
                                          keys: ["name", "when", "action", "variant", "reason"])
        let name = try reader.requiredString("name")
        var condition = RuleCondition()
        if let when = reader.value("when") {
            condition = try self.condition(from: when, source: source, context: context)
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
                                                 "thumbnailCoversDisplay"])
        var condition = RuleCondition()
        if let networkValue = reader.value("network") {
            condition.networks = try networkKinds(networkValue, reader: reader)
        }
        condition.expensive = try reader.bool("expensive")
        condition.constrained = try reader.bool("constrained")
        condition.roaming = try reader.bool("roaming")
        condition.captive = try reader.bool("captive")
        condition.hasThumbnail = try reader.bool("hasThumbnail")
        condition.thumbnailCoversDisplay = try reader.bool("thumbnailCoversDisplay")
        for member in try reader.object("settings") ?? [] {
            guard case .bool(let wanted) = member.value.kind else {
                throw reader.error("setting \"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            condition.settings[member.key] = wanted
        }
        for member in try reader.object("cached") ?? [] {
            guard let variant = Variant(rawValue: member.key) else {
                throw reader.error("unknown variant \"\(member.key)\" in \"cached\" (expected \"original\" or \"thumbnail\")", at: member.value)
            }
            guard case .bool(let wanted) = member.value.kind else {
                throw reader.error("\"cached\".\"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            condition.cached[variant] = wanted
        }
        return condition
    }

    private static func networkKinds(_ value: JSONValue, reader: JSONObjectReader) throws(DataFileError) -> Set<NetworkKind> {
        let names: [JSONValue]
        switch value.kind {
        case .string: names = [value]
        case .array(let elements): names = elements
        default: throw reader.error("\"network\" must be a network kind or an array of them, found \(value.typeDescription)", at: value)
        }
        var kinds = Set<NetworkKind>()
        for name in names {
            guard case .string(let text) = name.kind else {
                throw reader.error("\"network\" must list strings, found \(name.typeDescription)", at: name)
            }
            guard let kind = NetworkKind(rawValue: text) else {
                throw reader.error("unknown network kind \"\(text)\" (expected \(quotedList(NetworkKind.allCases.map(\.rawValue))))", at: name)
            }
            kinds.insert(kind)
        }
        return kinds
    }

    private static func policyCase(from value: JSONValue, source: String, context: String) throws(DataFileError) -> PolicyCase {
        let reader = try JSONObjectReader(value, source: source, context: context, what: "a case",
                                          keys: ["name", "network", "expensive", "constrained", "roaming", "captive", "settings", "cached",
                                                 "hasThumbnail", "thumbnailCoversDisplay", "expect"])
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
        var settings: [String: Bool] = [:]
        for member in try reader.object("settings") ?? [] {
            guard case .bool(let value) = member.value.kind else {
                throw reader.error("setting \"\(member.key)\" must be true or false, found \(member.value.typeDescription)", at: member.value)
            }
            settings[member.key] = value
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
        guard let expectValue = reader.value("expect") else { throw reader.error("\"expect\" is missing") }
        let expect = try JSONObjectReader(expectValue, source: source, context: context, what: "\"expect\"", keys: ["action", "variant", "rule"])
        let action = try self.action(reader: expect)
        let rule = try expect.string("rule")
        return PolicyCase(name: name, network: network, settings: settings, cached: cached, hasThumbnail: hasThumbnail,
                          thumbnailCoversDisplay: covers, expect: action, rule: rule, line: value.line)
    }
}

func quotedList(_ names: [String]) -> String {
    names.map { "\"\($0)\"" }.joined(separator: ", ")
}
