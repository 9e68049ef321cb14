import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import cli

/// `DecideOption`'s table is the one declaration of the `decide` options: these tests fail when
/// either way of reading a command line drifts from it. Every option of the table is run through
/// swift-argument-parser (`Decide`) and through the fast path (`QuickDecide`), in process (the
/// same `DecisionOptions`, and different from the same command line without the option) and as the
/// built command (`--item FILE …` takes the fast path, `--item=FILE …` swift-argument-parser's:
/// the same standard output, standard error and exit status, bad values included); and
/// swift-argument-parser's own description of `decide` (`--experimental-dump-help`, what its help,
/// completions and man page are made from) is the table, row for row.
struct DecideOptionTableTests {
    let cli = CLIRunner()

    /// The files the samples name, in the runner's folder.
    struct Files {
        let item: String
        let settings: String
        let cache: String
        let output: String

        init(_ cli: CLIRunner) throws {
            item = try cli.home.write(#"{"id": "x", "original": "https://images.example.com/x.jpg", "thumbnail": "https://images.example.com/t.jpg"}"#,
                                      to: "item.json")
            settings = try cli.home.write(#"{"alwaysDownloadOriginalImage": true}"#, to: "settings.json")
            cache = cli.home.file("cache")
            output = cli.home.file("out.png")
        }
    }

    /// Command lines that show each option at work (`good`: the fast path reads them), and
    /// others: bad values (each path reports them), or forms the fast path leaves to
    /// swift-argument-parser (a repeated flag or option). A new option of the table without a
    /// sample here fails `everyOptionHasASample`.
    static func samples(_ option: DecideOption, _ files: Files) -> (good: [[String]], others: [[String]]) {
        let item = ["--item", files.item]
        switch option {
        case .item:
            return ([item, ["--item", "-"]], [["--item", files.item + ".missing"], ["--network", "wifi"]])
        case .network:
            return ([item + ["--network", "cellular"], item + ["--network", "CELLULAR,roaming", "--json"]],
                    [item + ["--network", "wlan"], item + ["--network", "wifi", "--network", "cellular"]])
        case .expensive:
            return ([item + ["--network", "cellular", "--expensive", "--json"]], [item + ["--expensive", "--expensive"]])
        case .constrained:
            return ([item + ["--network", "cellular", "--constrained", "--json"]], [])
        case .roaming:
            return ([item + ["--network", "cellular", "--roaming", "--json"]], [])
        case .captive:
            return ([item + ["--network", "wifi", "--captive", "--json"]], [])
        case .throughput:
            return ([item + ["--network", "wifi", "--throughput", "1000", "--policy", "slow-wifi-thumbnails", "--explain"]],
                    [item + ["--network", "wifi", "--throughput", "abc"], item + ["--network", "wifi", "--throughput", "-5"]])
        case .policy:
            return ([item + ["--network", "cellular", "--policy", "low-data"]], [item + ["--policy", "no-such-policy"]])
        case .settings:
            return ([item + ["--network", "cellular", "--settings", files.settings]],
                    [item + ["--network", "cellular", "--settings", files.settings + ".missing"]])
        case .overrides:
            return ([item + ["--network", "cellular", "--set", "alwaysDownloadOriginalImage=on"],
                     item + ["--network", "cellular", "--settings", files.settings, "--set", "alwaysDownloadOriginalImage=on",
                             "--set", "alwaysDownloadOriginalImage=0", "--explain"]],
                    [item + ["--set", "alwaysDownloadOriginalImage=maybe"], item + ["--set", "noSuchSetting=maybe"], item + ["--set", "novalue"],
                     item + ["--policy", "wifi-only", "--set", "alwaysDownloadOriginalImage=1"], item + ["--set"]])
        case .cached:
            return ([item + ["--network", "offline", "--cached", "thumbnail"],
                     item + ["--network", "offline", "--cached", "thumbnail", "--cached", "original", "--json"]],
                    [item + ["--cached", "both"], item + ["--network", "offline", "--cached", "thumbnail", "--fetch"]])
        case .json:
            return ([item + ["--network", "wifi", "--json"]], [item + ["--json", "--jsn"]])
        case .explain:
            return ([item + ["--network", "wifi", "--explain"], item + ["--network", "wifi", "--explain", "--json"]], [])
        case .fetch:
            return ([item + ["--network", "offline", "--fetch"]], [])
        case .cacheFolder:
            return ([item + ["--network", "wifi", "--cache-dir", files.cache]], [item + ["--cache-dir"]])
        case .output:
            return ([item + ["--network", "offline", "--fetch", "--output", files.output]],
                    [item + ["--network", "offline", "--output", files.output], item + ["--fetch", "--network", "offline", "--output", "-"]])
        case .size:
            return ([item + ["--network", "wifi", "--size", "40x30", "--policy", "thumbnail-when-enough", "--explain"]],
                    [item + ["--size", "0x5"], item + ["--size", "-1x5"]])
        case .verbose:
            return ([item + ["--network", "wifi", "-v"], item + ["--network", "wifi", "--verbose", "-vv"]], [item + ["-x"]])
        }
    }

    /// `--item FILE …` as swift-argument-parser alone reads it: `--item=FILE …`.
    static func slowForm(_ arguments: [String]) -> [String] {
        guard let position = arguments.firstIndex(of: "--item"), position + 1 < arguments.count else { return arguments }
        var slow = arguments
        slow.replaceSubrange(position...(position + 1), with: ["--item=" + arguments[position + 1]])
        return slow
    }

    /// `arguments` without `option` (and its values).
    static func removing(_ option: DecideOption, from arguments: [String]) -> [String] {
        let declaration = option.declaration
        var kept: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let isShort = declaration.short.map { short in argument.count > 1 && argument.hasPrefix("-") && !argument.hasPrefix("--")
                && argument.unicodeScalars.dropFirst().allSatisfy { $0 == short } } ?? false
            guard argument == "--" + declaration.name || isShort else {
                kept.append(argument)
                continue
            }
            if declaration.form == .value || declaration.form == .repeatedValue { _ = remaining.popFirst() }
        }
        return kept
    }

    @Test func everyOptionHasASample() throws {
        let files = try Files(cli)
        for option in DecideOption.allCases {
            #expect(!Self.samples(option, files).good.isEmpty, "--\(option.declaration.name) has no sample")
        }
    }

    /// In process: both paths make the same `DecisionOptions` from every sample, and the option
    /// changes them (a row that applies its value nowhere fails here). A counted flag is
    /// left to swift-argument-parser by the fast path, as its table form says.
    @Test(arguments: DecideOption.allCases)
    func bothPathsReadTheOptionAlike(_ option: DecideOption) throws {
        let files = try Files(cli)
        for arguments in Self.samples(option, files).good {
            let parsed = try #require(try Imgpolicy.parseAsRoot(arguments) as? Decide, "\(arguments)").options()
            if option != .item {
                let without = try #require(try Imgpolicy.parseAsRoot(Self.removing(option, from: arguments)) as? Decide).options()
                #expect(String(describing: parsed) != String(describing: without), "\(arguments): --\(option.declaration.name) changes nothing")
            }
            let quick = QuickDecide.options(from: arguments)
            if option.declaration.form == .counted {
                #expect(quick == nil, "\(arguments)")
            } else {
                let quick = try #require(quick, "the fast path does not read \(arguments)")
                #expect(String(describing: quick) == String(describing: parsed), "\(arguments)")
            }
        }
    }

    /// The built command: each sample, good or not, prints the same and exits the same through
    /// the fast path (`--item FILE`) and through swift-argument-parser (`--item=FILE`).
    @Test(arguments: DecideOption.allCases)
    func bothPathsPrintTheSame(_ option: DecideOption) async throws {
        let files = try Files(cli)
        let samples = Self.samples(option, files)
        let stdin = try String(contentsOfFile: files.item, encoding: .utf8)
        for arguments in samples.good + samples.others {
            let fast = try await cli.run(arguments, stdin: stdin)
            let slow = try await cli.run(Self.slowForm(arguments), stdin: stdin)
            #expect(fast.status == slow.status, "\(arguments)")
            #expect(fast.stdout == slow.stdout, "\(arguments)")
            #expect(fast.stderr == slow.stderr, "\(arguments)")
            if samples.good.contains(arguments) {
                #expect(fast.status == 0 || (option == .output && fast.status == 69), "\(arguments): \(fast.stderr)")
            }
        }
    }

    /// swift-argument-parser's description of `decide` (its help, completions and man page are
    /// made from it) is the table, option for option and in its order.
    @Test func argumentParserDeclaresWhatTheTableDeclares() async throws {
        let result = try await cli.run(["--experimental-dump-help"])
        #expect(result.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let command = try #require(root["command"] as? [String: Any])
        let subcommands = try #require(command["subcommands"] as? [[String: Any]])
        let decide = try #require(subcommands.first { $0["commandName"] as? String == "decide" })
        let arguments = try #require(decide["arguments"] as? [[String: Any]]).filter { argument in
            let names = (argument["names"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            return !names.contains("help") && !names.contains("version")
        }
        func longName(_ argument: [String: Any]) -> String {
            (argument["preferredName"] as? [String: Any])?["name"] as? String ?? ""
        }
        // The same options in the same order: an option missing from either side is named here.
        #expect(arguments.map(longName) == DecideOption.allCases.map(\.declaration.name))
        for option in DecideOption.allCases {
            let declaration = option.declaration
            guard let argument = arguments.first(where: { longName($0) == declaration.name }) else { continue }
            let names = (argument["names"] as? [[String: Any]] ?? []).map { "\($0["kind"] as? String ?? ""):\($0["name"] as? String ?? "")" }
            #expect(names == ["long:\(declaration.name)"] + (declaration.short.map { ["short:\($0)"] } ?? []), "--\(declaration.name)")
            let isFlag = declaration.form == .flag || declaration.form == .counted
            #expect(argument["kind"] as? String == (isFlag ? "flag" : "option"), "--\(declaration.name)")
            #expect(argument["isRepeating"] as? Bool == (declaration.form == .counted || declaration.form == .repeatedValue), "--\(declaration.name)")
            #expect(argument["isOptional"] as? Bool == !declaration.isRequired, "--\(declaration.name)")
            #expect(argument["abstract"] as? String == declaration.help, "--\(declaration.name)")
            #expect(argument["defaultValue"] as? String == declaration.defaultValue, "--\(declaration.name)")
            #expect(argument["parsingStrategy"] as? String == (declaration.takesDashedValue ? "unconditional" : "default"), "--\(declaration.name)")
            if !isFlag {
                #expect(argument["valueName"] as? String == declaration.valueName, "--\(declaration.name)")
            }
        }
    }
}
