import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// `imgpolicy policy check|table|show`: validate policies and show what they decide and prefetch.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Check policy files, print their truth tables, and show their rules and prefetch plans.",
        subcommands: [Check.self, Table.self, Show.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate policy files and run each file's own cases (decisions, prefetch plans, running loads); exit 65 if any file fails.")

        @Argument(help: ArgumentHelp("Policy files (a path: it has a / or ends in .json) or bundled policies' names (a bare name, never a file in the current folder).",
                                     valueName: "file|name")) var files: [String]

        func run() throws {
            var worst: CommandFailure?
            for file in files {
                do {
                    let (policy, source) = try PolicyLocator.loadWithSource(file)
                    let failures = policy.failingCases()
                    // A path is named as given; a bare name says which file it found.
                    let read = PolicyLocator.isPath(file) ? "" : "; \(source)"
                    let named: String
                    if case .bundled(let path) = source { named = path } else { named = file }
                    if failures.isEmpty {
                        printLine(TerminalText.escaped("\(file): ok (\(policy.rules.count) rules, \(policy.cases.count) cases\(read))"))
                    } else {
                        for failure in failures {
                            let line = failure.policyCase.line > 0 ? "line \(failure.policyCase.line): " : ""
                            let message = "\(named): \(line)\(failure)"
                            FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(message))\n".utf8))
                        }
                        worst = worst ?? CommandFailure("\(file): \(failures.count) of \(policy.cases.count) cases fail\(read.isEmpty ? "" : " (\(source))")", status: .dataError)
                    }
                } catch let failure as CommandFailure {
                    FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(failure.message))\n".utf8))
                    if worst == nil || failure.status.rawValue > worst!.status.rawValue { worst = failure }
                }
            }
            if let worst { exitProcess(worst.status.rawValue) }
        }
    }

    struct Table: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every input combination of a policy and what it decides.")

        @Argument(help: ArgumentHelp("A bundled policy's name or a policy file.", valueName: "name|file"))
        var policy = "default"

        @Flag(help: "One JSON object per input, one per line.") var json = false

        func run() throws {
            let policy = try PolicyLocator.load(policy)
            var output = ""
            if !json {
                var header = "network   expensive constrained"
                if policy.readsRoaming { header += " roaming" }
                if policy.readsCaptive { header += " captive" }
                if policy.readsSlow { header += " slow" }
                header += " cached              thumbnail"
                if policy.readsThumbnailCoversDisplay { header += " covers" }
                if policy.readsRungCache { header += " cached-rung" }
                for declaration in policy.settings { header += " \(declaration.key)" }
                output += TerminalText.escaped(header + " -> decision (rule)") + "\n"
            }
            for (input, outcome) in policy.truthTable() {
                let rule = policy.rules[outcome.ruleIndex].name
                if json {
                    var members: [(key: String, value: JSONValue)] = [
                        ("network", JSONValue(.string(input.network.kind.rawValue))),
                        ("expensive", JSONValue(.bool(input.network.isExpensive))),
                        ("constrained", JSONValue(.bool(input.network.isConstrained))),
                        ("roaming", JSONValue(.bool(input.network.isRoaming))),
                        ("captive", JSONValue(.bool(input.network.isCaptive))),
                        ("cached", JSONValue(.array(Variant.allCases.filter { input.cached.has($0) }.map { JSONValue(.string($0.rawValue)) }))),
                        ("hasThumbnail", JSONValue(.bool(input.hasThumbnail))),
                    ]
                    if policy.readsSlow { members.append(("slow", JSONValue(.bool(input.isSlow)))) }
                    if policy.readsThumbnailCoversDisplay {
                        members.append(("thumbnailCoversDisplay", JSONValue(.bool(input.thumbnailCoversDisplay))))
                    }
                    if policy.readsRungCache { members.append(("cachedRung", JSONValue(.string(Self.cachedRung(input))))) }
                    let settings = policy.settings.enumerated().map { position, declaration in
                        (key: declaration.key, value: JSONValue(.bool(input.settings.isOn(at: position))))
                    }
                    members.append(("settings", JSONValue(.object(settings))))
                    members.append(("action", JSONValue(.string(outcome.action.kind.rawValue))))
                    // A rung rule's variant depends on the rung chosen for an item: null here.
                    let rungRule = policy.rules[outcome.ruleIndex].rung
                    members.append(("variant", JSONValue(rungRule == nil ? outcome.action.variant.map { .string($0.rawValue) } ?? .null : .null)))
                    members.append(("rule", JSONValue(.string(rule))))
                    if let rungRule { members.append(("rung", rungRule.policyJSON)) }
                    output += JSONWriter.compactText(of: JSONValue(.object(members))) + "\n"
                } else {
                    var line = pad(input.network.kind.rawValue, 10) + pad(yesNo(input.network.isExpensive), 10)
                        + pad(yesNo(input.network.isConstrained), 12)
                    if policy.readsRoaming { line += pad(yesNo(input.network.isRoaming), 8) }
                    if policy.readsCaptive { line += pad(yesNo(input.network.isCaptive), 8) }
                    if policy.readsSlow { line += pad(yesNo(input.isSlow), 5) }
                    line += pad(input.cached.description, 20) + pad(yesNo(input.hasThumbnail), 9)
                    if policy.readsThumbnailCoversDisplay { line += " " + pad(yesNo(input.thumbnailCoversDisplay), 6) }
                    if policy.readsRungCache { line += " " + pad(Self.cachedRung(input), 11) }
                    for (position, declaration) in policy.settings.enumerated() {
                        line += " " + pad(input.settings.isOn(at: position) ? "on" : "off", declaration.key.count)
                    }
                    output += TerminalText.escaped(line + " -> \(policy.rules[outcome.ruleIndex].actionDescription) (\(rule))") + "\n"
                }
            }
            FileHandle.standardOutput.write(Data(output.utf8))
        }

        /// `none`, `narrower` (a rung is cached, none covers the display) or `covering`.
        static func cachedRung(_ input: PolicyInput) -> String {
            input.coveringRungCached ? "covering" : input.anyRungCached ? "narrower" : "none"
        }
    }
}

extension PolicyCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A policy's rules, its prefetch section, running-loads and revalidateStale options, and for every network state the prefetch plan, what happens to running loads and whether stale images are revalidated.")

        @Argument(help: ArgumentHelp("A bundled policy's name or a policy file.", valueName: "name|file"))
        var policy = "default"

        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let (policy, source) = try PolicyLocator.loadWithSource(policy)
            let text = json ? JSONWriter.text(of: Self.json(policy)) + "\n" : ArgumentPaths.shown(Self.text(policy, source: source))
            FileHandle.standardOutput.write(Data(text.utf8))
        }

        static func text(_ policy: ImagePolicy, source: PolicyLocator.Source) -> String {
            var lines = ["policy \(policy.name) (\(source))"]
            if !policy.summary.isEmpty { lines.append("description: \(policy.summary)") }
            if !policy.settings.isEmpty {
                lines.append("settings: " + policy.settings.map { "\($0.key) (default \($0.defaultValue ? "on" : "off"))" }.joined(separator: ", "))
            }
            lines.append("rules (first match decides):")
            for (index, rule) in policy.rules.enumerated() {
                lines.append("  \(index + 1). \(rule.name): when \(rule.condition.summary) -> \(rule.actionDescription)")
            }
            lines.append("prefetch (first match gives the plan):")
            for (index, entry) in policy.prefetch.enumerated() {
                lines.append("  \(index + 1). \(entry.name.map { "\($0): " } ?? "")when \(entry.condition.summary) -> \(entry.plan)")
            }
            lines.append("  otherwise -> nothing")
            lines.append("running loads when the network gets worse (first match decides):")
            for (index, entry) in policy.runningLoadsOnWorseNetwork.enumerated() {
                lines.append("  \(index + 1). when \(entry.condition.summary) -> \(entry.runningLoads)")
            }
            lines.append("  otherwise -> cancel")
            let revalidation = policy.staleRevalidation.map { "\($0)" } ?? "\(StaleRevalidation.default) (not set: the default)"
            lines.append("revalidate stale images: \(revalidation) (per network state in the table below; never offline or captive)")
            let retries = policy.costlyLinkRetries.map { "\($0)" } ?? "\(RetryScope.costlyLinkDefault) (not set: the default)"
            lines.append("retries on a costly link: \(retries) (on a free link, every retry the transport allows)")
            lines.append("")
            var header = "network   expensive constrained"
            if policy.prefetchReadsRoaming { header += " roaming" }
            if policy.prefetchReadsCaptive { header += " captive" }
            for declaration in policy.settings { header += " \(declaration.key)" }
            lines.append(header + " -> prefetch (entry); running loads; stale images")
            for row in policy.networkStatePlans() {
                var line = pad(row.network.kind.rawValue, 10) + pad(yesNo(row.network.isExpensive), 10)
                    + pad(yesNo(row.network.isConstrained), 12)
                if policy.prefetchReadsRoaming { line += pad(yesNo(row.network.isRoaming), 8) }
                if policy.prefetchReadsCaptive { line += pad(yesNo(row.network.isCaptive), 8) }
                for (position, declaration) in policy.settings.enumerated() {
                    line += " " + pad(row.settings.isOn(at: position) ? "on" : "off", declaration.key.count)
                }
                let entry = row.prefetchEntry.map { index in policy.prefetch[index].name ?? "entry \(index + 1)" } ?? "no entry"
                let stale = policy.revalidatesStale(on: row.network) ? "revalidated" : "shown as they are"
                lines.append(line + " -> \(row.prefetch) (\(entry)); \(row.runningLoads); \(stale)")
            }
            return lines.map(TerminalText.escaped).joined(separator: "\n") + "\n"
        }

        static func json(_ policy: ImagePolicy) -> JSONValue {
            let settings = policy.settings.map { (key: $0.key, value: JSONValue(.bool($0.defaultValue))) }
            let rules = policy.rules.map { rule in
                object([("name", string(rule.name)), ("when", condition(rule.condition)), ("action", string(rule.action.kind.rawValue)),
                        ("variant", rule.rung == nil ? rule.action.variant.map { string($0.rawValue) } ?? JSONValue(.null) : JSONValue(.null)),
                        ("rung", rule.rung?.policyJSON ?? JSONValue(.null)), ("reason", string(rule.reason))])
            }
            let prefetch = policy.prefetch.map { entry in
                object([("name", entry.name.map(string) ?? JSONValue(.null)), ("when", condition(entry.condition))] + members(entry.plan))
            }
            let running = policy.runningLoadsOnWorseNetwork.map { entry in
                object([("when", condition(entry.condition)), ("then", string(entry.runningLoads.rawValue))])
            }
            let table = policy.networkStatePlans().map { row in
                let rowSettings = policy.settings.enumerated().map { position, declaration in
                    (key: declaration.key, value: JSONValue(.bool(row.settings.isOn(at: position))))
                }
                return object([
                    ("network", string(row.network.kind.rawValue)), ("expensive", JSONValue(.bool(row.network.isExpensive))),
                    ("constrained", JSONValue(.bool(row.network.isConstrained))), ("roaming", JSONValue(.bool(row.network.isRoaming))),
                    ("captive", JSONValue(.bool(row.network.isCaptive))), ("settings", JSONValue(.object(rowSettings))),
                    ("prefetch", object(members(row.prefetch))),
                    ("prefetchEntry", row.prefetchEntry.map { number($0 + 1) } ?? JSONValue(.null)),
                    ("runningLoads", string(row.runningLoads.rawValue)),
                    ("revalidatesStale", JSONValue(.bool(policy.revalidatesStale(on: row.network)))),
                ])
            }
            return object([
                ("name", string(policy.name)), ("description", string(policy.summary)), ("settings", JSONValue(.object(settings))),
                ("rules", JSONValue(.array(rules))), ("prefetch", JSONValue(.array(prefetch))),
                ("runningLoadsOnWorseNetwork", JSONValue(.array(running))),
                ("revalidateStale", policy.staleRevalidation.map { string($0.rawValue) } ?? JSONValue(.null)),
                ("retryOnCostlyLink", policy.costlyLinkRetries.map { string($0.rawValue) } ?? JSONValue(.null)), ("table", JSONValue(.array(table))),
            ])
        }

        private static func members(_ plan: PrefetchPlan) -> [(key: String, value: JSONValue)] {
            [("ahead", number(plan.ahead)), ("behind", number(plan.behind)), ("variants", string(plan.variants.rawValue))]
        }

        /// A condition as the policy file writes it.
        private static func condition(_ condition: RuleCondition) -> JSONValue {
            var members: [(key: String, value: JSONValue)] = []
            if let networks = condition.networks {
                let kinds = NetworkKind.allCases.filter(networks.contains).map { string($0.rawValue) }
                members.append(("network", JSONValue(.array(kinds))))
            }
            for (key, flag) in [("expensive", condition.expensive), ("constrained", condition.constrained), ("roaming", condition.roaming),
                                ("captive", condition.captive)] {
                if let flag { members.append((key, JSONValue(.bool(flag)))) }
            }
            if !condition.settings.isEmpty {
                members.append(("settings", JSONValue(.object(condition.settings.sorted { $0.key < $1.key }
                    .map { (key: $0.key, value: JSONValue(.bool($0.value))) }))))
            }
            var cached = Variant.allCases.compactMap { variant in
                condition.cached[variant].map { (key: variant.rawValue, value: JSONValue(.bool($0))) }
            }
            if let flag = condition.coveringRungCached { cached.append(("covering", JSONValue(.bool(flag)))) }
            if let flag = condition.anyRungCached { cached.append(("any", JSONValue(.bool(flag)))) }
            if !cached.isEmpty { members.append(("cached", JSONValue(.object(cached)))) }
            if let flag = condition.hasThumbnail { members.append(("hasThumbnail", JSONValue(.bool(flag)))) }
            if let flag = condition.thumbnailCoversDisplay { members.append(("thumbnailCoversDisplay", JSONValue(.bool(flag)))) }
            return JSONValue(.object(members))
        }

        private static func object(_ members: [(key: String, value: JSONValue)]) -> JSONValue { JSONValue(.object(members)) }
        private static func string(_ text: String) -> JSONValue { JSONValue(.string(text)) }
        private static func number(_ value: Int) -> JSONValue { JSONValue(.number(String(value))) }
    }
}

/// `yes` or `no`, for the tables.
private func yesNo(_ flag: Bool) -> String { flag ? "yes" : "no" }

/// `text` padded with spaces to `width` characters.
private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
