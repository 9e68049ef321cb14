import Testing

/// `imgpolicy decide --throughput BYTES_PER_SECOND`: the measured link reaches a policy that tests
/// "slow"; a bad value is a one-line usage error (exit 64).
struct ThroughputOptionTests {
    let cli = CLIRunner()

    struct Row: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var rule: String
        var testDescription: String { arguments.joined(separator: " ") + " → " + rule }
    }

    static let rows: [Row] = [
        Row(arguments: ["--policy", "slow-wifi-thumbnails"], rule: "wifi-original"),
        Row(arguments: ["--policy", "slow-wifi-thumbnails", "--throughput", "30000"], rule: "slow-wifi-thumbnail"),
        Row(arguments: ["--policy", "slow-wifi-thumbnails", "--throughput", "51200"], rule: "wifi-original"),
        Row(arguments: ["--policy", "slow-wifi-thumbnails", "--throughput", "5e5"], rule: "wifi-original"),
        Row(arguments: ["--policy", "slow-wifi-thumbnails", "--throughput", "0"], rule: "slow-wifi-thumbnail"),
        Row(arguments: ["--policy", "low-data", "--throughput", "1000"], rule: "slow-link-thumbnail"),
        Row(arguments: ["--policy", "default", "--throughput", "1000"], rule: "wifi-original"),
    ]

    @Test("--throughput reaches the policy", arguments: rows)
    func decides(_ row: Row) async throws {
        let result = try await cli.run(["decide", "--network", "wifi", "--item", "examples/item.json", "--json"] + row.arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""rule":"\#(row.rule)""#), "\(result.stdout)")
    }

    @Test func explainShowsTheSlowLink() async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "examples/item.json", "--policy", "slow-wifi-thumbnails",
                                        "--throughput", "30000", "--explain"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("network=wifi cached=none thumbnail=yes slow=yes"), "\(result.stdout)")
        #expect(result.stdout.contains("rule 3 slow-wifi-thumbnail [network is wifi or wired and slow and alwaysDownloadOriginalImage is off and has a thumbnail] yes: load thumbnail"),
                "\(result.stdout)")
        let fast = try await cli.run(["--network", "wifi", "--item", "examples/item.json", "--policy", "slow-wifi-thumbnails",
                                      "--throughput", "90000", "--explain"])
        #expect(fast.stdout.contains("no: the link is not slow (or not measured)"), "\(fast.stdout)")
    }

    @Test func theTableHasASlowColumnOnlyForPoliciesThatTestIt() async throws {
        let slow = try await cli.run(["policy", "table", "slow-wifi-thumbnails"])
        #expect(slow.stdout.hasPrefix("network   expensive constrained slow cached"), "\(slow.stdout.prefix(200))")
        #expect(slow.stdout.split(separator: "\n").count == 1 + 240 + 192, "240 inputs, and 192 more for a slow link (not offline)")
        let json = try await cli.run(["policy", "table", "slow-wifi-thumbnails", "--json"])
        #expect(json.stdout.contains(#""slow":true"#))
        let tree = try await cli.run(["policy", "table", "default"])
        #expect(!tree.stdout.contains(" slow "))
    }

    @Test(arguments: ["fast", "-1", "nan", "inf", "1e16", "", "30000x", "0x10"])
    func aBadValueIsAUsageError(_ value: String) async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "examples/item.json", "--policy", "slow-wifi-thumbnails",
                                        "--throughput", value])
        #expect(result.status == 64, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && result.stderr.contains("--throughput"), "\(result.stderr)")
    }
}
