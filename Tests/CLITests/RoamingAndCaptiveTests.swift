import Testing

/// `--roaming`, `--captive` and their `IMGPOLICY_NETWORK` forms reach the policy.
struct RoamingAndCaptiveTests {
    let cli = CLIRunner()

    @Test func roamingLoadsNothingNewWithLowData() async throws {
        let flag = try await cli.run(["--network", "cellular", "--roaming", "--item", "examples/item.json", "--policy", "low-data", "--json"])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stdout.contains(#""rule":"roaming-placeholder""#), "\(flag.stdout)")
        let variable = try await cli.run(["--item", "examples/item.json", "--policy", "low-data", "--json"],
                                   environment: ["IMGPOLICY_NETWORK": "cellular,roaming"])
        #expect(variable.stdout.contains(#""rule":"roaming-placeholder""#), "\(variable.stdout) \(variable.stderr)")
        // The default tree: roaming is cellular.
        let tree = try await cli.run(["--network", "cellular", "--roaming", "--item", "examples/item.json", "--json"])
        #expect(tree.stdout.contains(#""rule":"cellular-thumbnail""#), "\(tree.stdout)")
    }

    @Test func captiveIsOffline() async throws {
        let flag = try await cli.run(["--network", "wifi", "--captive", "--item", "examples/item.json", "--json"])
        #expect(flag.stdout.contains(#""rule":"offline-placeholder""#), "\(flag.stdout) \(flag.stderr)")
        let variable = try await cli.run(["--item", "examples/item.json", "--json"], environment: ["IMGPOLICY_NETWORK": "wifi,captive"])
        #expect(variable.stdout.contains(#""rule":"offline-placeholder""#), "\(variable.stdout) \(variable.stderr)")
    }
}
