import Policy
import Testing

/// The policy file's `retryOnCostlyLink` option: read, validated, and applied per link.
struct RetryScopeTests {
    static func policy(_ extra: String) throws(DataFileError) -> ImagePolicy {
        try StaleRevalidationTests.policy(extra)
    }

    @Test func theOptionIsReadAndItsAbsenceIsTheDefault() throws {
        #expect(try Self.policy(#", "retryOnCostlyLink": "never""#).costlyLinkRetries == .never)
        #expect(try Self.policy(#", "retryOnCostlyLink": "always""#).retries(on: NetworkState(.cellular)) == .asConfigured)
        let unsaid = try Self.policy("")
        #expect(unsaid.costlyLinkRetries == nil)
        #expect(unsaid.retries(on: NetworkState(.cellular)) == .withoutRedownloading)
        #expect(unsaid.retries(on: NetworkState(.wifi, isExpensive: true)) == .withoutRedownloading)
        // A free link retries as the transport is configured, whatever the option.
        #expect(try Self.policy(#", "retryOnCostlyLink": "never""#).retries(on: NetworkState(.wifi)) == .asConfigured)
    }

    @Test(arguments: [#""sometimes""#, "true", "1", #""Never""#])
    func badValuesAreRefusedNamingTheKeyAndTheChoices(_ value: String) {
        #expect {
            _ = try Self.policy(#", "retryOnCostlyLink": \#(value)"#)
        } throws: { error in
            let text = "\(error)"
            // A string names the choices; another type says which type it found.
            return text.contains("retryOnCostlyLink") && (text.contains("without-redownload") || text.contains("must be a string"))
        }
    }
}
