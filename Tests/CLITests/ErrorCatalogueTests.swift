import Foundation
import Testing
import TestSupport

/// Every exit status, and a catalogue of bad inputs: each gives one line on standard error that
/// names the file or the flag, the documented status, and never a crash.
struct ErrorCatalogueTests {
    struct BadInput: Sendable, CustomTestStringConvertible {
        var label: String
        var content: [UInt8]
        var message: String
        var testDescription: String { label }

        init(_ label: String, _ text: String, _ message: String) {
            self.label = label
            content = Array(text.utf8)
            self.message = message
        }

        init(_ label: String, bytes: [UInt8], _ message: String) {
            self.label = label
            content = bytes
            self.message = message
        }
    }

    static let badItems: [BadInput] = [
        BadInput("empty file", "", "the file is empty"),
        BadInput("white space only", " \n\n", "no JSON value"),
        BadInput("binary garbage", bytes: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }, "expected a value"),
        BadInput("invalid UTF-8 in a string", bytes: Array(#"{"original": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8), "not valid UTF-8"),
        BadInput("10 MB of nesting", String(repeating: "[", count: 10_000_000), "nesting deeper than 64 levels"),
        BadInput("10 MB of object nesting", String(repeating: #"{"a":"#, count: 2_000_000), "nesting deeper than 64 levels"),
        BadInput("original missing", #"{"thumbnail": "https://a.example/t"}"#, #""original" is missing"#),
        BadInput("original a number", "{\n\n  \"original\": 12\n}", #"line 3: "original" must be a string, found a number"#),
        BadInput("thumbnail an object", #"{"original": "https://a/o", "thumbnail": {}}"#, #""thumbnail" must be a string"#),
        BadInput("relative URL", #"{"original": "img/o.jpg"}"#, "is not an absolute URL"),
        BadInput("file URL", #"{"original": "file:///etc/passwd"}"#, #"scheme "file" is not allowed"#),
        BadInput("javascript URL", #"{"original": "javascript:alert(1)"}"#, #"scheme "javascript" is not allowed"#),
        BadInput("data URL", #"{"original": "data:image/png;base64,AAAA"}"#, #"scheme "data" is not allowed"#),
        BadInput("no host", #"{"original": "https:///x"}"#, "has no host"),
        BadInput("a number at top level", "42", "expected an item object or an array of items"),
        BadInput("an empty array", "[]", "the array holds no item"),
        BadInput("a bad item in an array", "[\n{\"original\": \"https://a/o\"},\n{\"original\": null}\n]", #"line 3: item 2: "original" is missing"#),
        BadInput("unknown key", #"{"original": "https://a/o", "thumb": "https://a/t"}"#, #"unknown key "thumb""#),
        BadInput("trailing garbage", #"{"original": "https://a/o"} x"#, "after the end of the JSON value"),
        BadInput("credentials in the URL", #"{"original": "https://me:secret@a.example/o"}"#, #""original": the URL holds user information (user:password@ before the host): credentials in URLs are not accepted"#),
        BadInput("a unicode host", #"{"original": "https://bücher.example/o"}"#, #""original": the host "bücher.example" is not ASCII"#),
        BadInput("port 99999", #"{"original": "https://a.example:99999/o"}"#, #""original": the port "99999" is not a number from 1 to 65535"#),
        BadInput("port abc", #"{"original": "https://a.example:abc/o"}"#, #""original": the port "abc" is not a number from 1 to 65535"#),
        BadInput("a bad IPv6 address", #"{"original": "https://[::g]/o"}"#, #""original": the host [::g] is not a valid IPv6 address"#),
        BadInput("a URL over 8 KiB", #"{"original": "https://a.example/"# + String(repeating: "x", count: 8192) + #""}"#, "longer than the limit of 8192"),
    ]

    let cli = CLIRunner()

    @Test("a bad item file exits 65 with one line naming the file", arguments: badItems)
    func badItem(_ bad: BadInput) async throws {
        let path = try cli.home.write(Data(bad.content), to: "item.json")
        let result = try await cli.run(["--network", "wifi", "--item", path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("imgpolicy: \(path): "), "\(result.stderr)")
        #expect(result.stderr.contains(bad.message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test(arguments: [
        (["--network", "lte", "--item", "examples/item.json"], "--network \"lte\" is not a network state"),
        (["--item", "examples/item.json", "--frobnicate"], "Unknown option '--frobnicate'"),
        (["--network", "wifi"], "Missing expected argument '--item"),
        (["--item", "examples/item.json", "--set", "hd=true"], #"--set hd=true: the policy "default" reads no setting "hd""#),
        (["--item", "examples/item.json", "--set", "alwaysDownloadOriginalImage=maybe"], #""maybe" is not a boolean"#),
        (["--item", "examples/item.json", "--set", "alwaysDownloadOriginalImage"], "expected key=value"),
        (["--item", "examples/item.json", "--cached", "hd"], "The value 'hd' is invalid for '--cached"),
        (["--item", "examples/item.json", "--cached", "original", "--fetch"], "--cached cannot be combined with --fetch"),
        (["--item", "examples/item.json", "--policy", "no-such-policy"], #"no policy named "no-such-policy""#),
        (["settings", "set", "alwaysDownloadOriginalImage", "maybe"], #""maybe" is not a boolean"#),
        (["policy", "check"], "Missing expected argument '<file|name> ...'"),
    ])
    func usageErrorsExit64(_ arguments: [String], _ message: String) async throws {
        let result = try await cli.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    /// Issue 16: a value starting with `-` was taken for an option, so `--items -1` said
    /// "Missing value for '--items <n>'". An option's value is read as given and refused as a
    /// value (or taken); a positional value that looks like an option names `--`.
    @Test(arguments: [
        (["simulate", "--items", "-1"], "--items -1: expected a count from 1 to 100000"),
        (["simulate", "--visible", "-3"], "--visible -3: expected a count from 1 to 100"),
        (["simulate", "--seed", "-1"], "--seed -1: expected a whole number from 0 to 18446744073709551615"),
        (["simulate", "--original-bytes", "-5"], "--original-bytes -5: expected a size from 96 to 16000000 bytes"),
        (["simulate", "--latency", "-5-10"], "--latency -5-10: expected MIN-MAX in milliseconds"),
        (["--item", "examples/item.json", "--size", "-1x5"], "The value '-1x5' is invalid for '--size <WxH>'"),
        (["--item", "examples/item.json", "--fetch", "--size", "-1x5"], "The value '-1x5' is invalid for '--size <WxH>'"),
        (["--item", "examples/item.json", "--throughput", "-5"], "--throughput -5: expected a number of bytes per second"),
        (["stats", "--since", "-1"], "--since -1: not a day; expected YYYY-MM-DD"),
        (["settings", "set", "b", "-0"], #""-0" was read as an option, so '<value>' is missing; a value that starts with "-" goes after "--", which ends the options: imgpolicy settings set b -- -0"#),
        (["settings", "get", "-x"], #""-x" was read as an option, so '<key>' is missing; a value that starts with "-" goes after "--", which ends the options: imgpolicy settings get -- -x"#),
    ])
    func aValueStartingWithADashIsAValue(_ arguments: [String], _ message: String) async throws {
        let result = try await cli.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("imgpolicy: "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Missing"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    /// What `--` makes possible: a negative number as a setting's value.
    @Test func aSettingsValueAfterTheTerminatorIsStored() async throws {
        let result = try await cli.run(["settings", "set", "--settings", cli.home.file("s.json"), "b", "--", "-0.5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.home.read("s.json").contains(#""b": -0.5"#))
    }

    @Test func aMissingFileExits66() async throws {
        for arguments in [["--item", "/nonexistent/x.json"], ["--item", "examples/item.json", "--policy", "/nonexistent/p.json"],
                          ["policy", "check", "/nonexistent/p.json"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 66)
            #expect(result.stderr == "imgpolicy: /nonexistent/\(arguments[1] == "check" || arguments.count > 2 ? "p" : "x").json: no such file\n")
        }
        let folder = try await cli.run(["--item", cli.home.path])
        #expect(folder.status == 66)
        #expect(folder.stderr == "imgpolicy: \(cli.home.path): is a directory, not a regular file\n")
    }

    @Test func aBadPolicyFileExits65() async throws {
        let path = try cli.home.write(#"{"rules": [{"name": "a", "when": {"network": "5g"}, "action": "placeholder", "reason": "r"}]}"#, to: "p.json")
        let result = try await cli.run(["--item", "examples/item.json", "--policy", path])
        #expect(result.status == 65)
        #expect(result.stderr == "imgpolicy: \(path): line 1: rule 1 (\"a\"): unknown network kind \"5g\" (expected \"wifi\", \"cellular\", \"wired\", \"offline\", \"unknown\")\n")
    }

    @Test func aCorruptSettingsFileExits65AndIsKept() async throws {
        let path = try cli.home.write("{\"alwaysDownloadOriginalImage\": \n", to: "settings.json")
        let decide = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--settings", path])
        #expect(decide.status == 65)
        #expect(decide.stderr.hasPrefix("imgpolicy: \(path): line 2: "))
        let set = try await cli.run(["settings", "set", "x", "1", "--settings", path])
        #expect(set.status == 65)
        #expect(try cli.home.read("settings.json") == "{\"alwaysDownloadOriginalImage\": \n")
    }

    @Test func aSettingOfTheWrongTypeExits65NamingFileAndKey() async throws {
        let path = try cli.home.write("{\n  \"alwaysDownloadOriginalImage\": \"yes\"\n}\n", to: "settings.json")
        let result = try await cli.run(["--network", "cellular", "--item", "examples/item.json", "--settings", path])
        #expect(result.status == 65)
        #expect(result.stderr == "imgpolicy: \(path): line 2: \"alwaysDownloadOriginalImage\" holds a string (\"yes\"), expected a boolean\n")
    }

    @Test func anUnwritableSettingsFileExits74() async throws {
        // A settings "file" whose folder is a regular file cannot be created, even by root.
        try cli.home.write("x", to: "blocker")
        let result = try await cli.run(["settings", "set", "a", "true", "--settings", cli.home.file("blocker/settings.json")])
        #expect(result.status == 74)
        #expect(result.stderr.contains("blocker/settings.json"))
    }

    @Test func anUnsetSettingExits1() async throws {
        let result = try await cli.run(["settings", "get", "nothing-here"])
        #expect(result.status == 1)
        #expect(result.stderr == "imgpolicy: nothing-here is not set\n")
    }

    @Test func aNonRegularInputFileExits66() async throws {
        for path in ["/dev/zero", cli.home.path] {
            let result = try await cli.run(["--item", path])
            #expect(result.status == 66)
            #expect(result.stderr.hasPrefix("imgpolicy: \(path): is a "))
            #expect(result.stderr.hasSuffix(", not a regular file\n"))
        }
    }

    @Test func aBadLogLevelExits64() async throws {
        let result = try await cli.run(["--item", "examples/item.json"], environment: ["IMGPOLICY_LOG_LEVEL": "verbose"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("imgpolicy: IMGPOLICY_LOG_LEVEL=\"verbose\" is not a log level"))
    }

    @Test func helpExits0() async throws {
        let result = try await cli.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: imgpolicy"))
        #expect(result.stdout.contains("65 bad item, policy or settings file"))
    }
}
