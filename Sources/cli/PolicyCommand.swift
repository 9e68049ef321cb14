import ArgumentParser
import Foundation
import Policy

/// `imgpolicy policy check|table`: validate policies and show what they decide.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Check policy files and print their truth tables.",
        subcommands: [Check.self, Table.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate policy files and run each file's own cases; exit 65 if any file fails.")

        @Argument(help: ArgumentHelp("Policy files or bundled names.", valueName: "file")) var files: [String]

        func run() throws {
            var worst: CommandFailure?
            for file in files {
                do {
                    let policy = try PolicyLocator.load(file)
                    let failures = policy.failingCases()
                    if failures.isEmpty {
                        printLine(TerminalText.escaped("\(file): ok (\(policy.rules.count) rules, \(policy.cases.count) cases)"))
                    } else {
                        for failure in failures {
                            let line = failure.policyCase.line > 0 ? "line \(failure.policyCase.line): " : ""
                            let message = "\(file): \(line)\(failure)"
                            FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(message))\n".utf8))
                        }
                        worst = worst ?? CommandFailure("\(file): \(failures.count) of \(policy.cases.count) cases fail", status: .dataError)
                    }
                } catch let failure as CommandFailure {
                    FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(failure.message))\n".utf8))
                    if worst == nil || failure.status.rawValue > worst!.status.rawValue { worst = failure }
                }
            }
            if let worst { Foundation.exit(worst.status.rawValue) }
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
                header += " cached              thumbnail"
                if policy.readsThumbnailCoversDisplay { header += " covers" }
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
                    if policy.readsThumbnailCoversDisplay {
                        members.append(("thumbnailCoversDisplay", JSONValue(.bool(input.thumbnailCoversDisplay))))
                    }
                    let settings = policy.settings.enumerated().map { position, declaration in
                        (key: declaration.key, value: JSONValue(.bool(input.settings.isOn(at: position))))
                    }
                    members.append(("settings", JSONValue(.object(settings))))
                    members.append(("action", JSONValue(.string(outcome.action.kind.rawValue))))
                    members.append(("variant", JSONValue(outcome.action.variant.map { .string($0.rawValue) } ?? .null)))
                    members.append(("rule", JSONValue(.string(rule))))
                    output += JSONWriter.compactText(of: JSONValue(.object(members))) + "\n"
                } else {
                    var line = pad(input.network.kind.rawValue, 10) + pad(yesNo(input.network.isExpensive), 10)
                        + pad(yesNo(input.network.isConstrained), 12)
                    if policy.readsRoaming { line += pad(yesNo(input.network.isRoaming), 8) }
                    if policy.readsCaptive { line += pad(yesNo(input.network.isCaptive), 8) }
                    line += pad(input.cached.description, 20) + pad(yesNo(input.hasThumbnail), 9)
                    if policy.readsThumbnailCoversDisplay { line += " " + pad(yesNo(input.thumbnailCoversDisplay), 6) }
                    for (position, declaration) in policy.settings.enumerated() {
                        line += " " + pad(input.settings.isOn(at: position) ? "on" : "off", declaration.key.count)
                    }
                    output += TerminalText.escaped(line + " -> \(outcome.action) (\(rule))") + "\n"
                }
            }
            FileHandle.standardOutput.write(Data(output.utf8))
        }

        private func yesNo(_ flag: Bool) -> String { flag ? "yes" : "no" }
        private func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
    }
}
