import Policy
import Testing
import TestSupport

/// The portable providers: the environment variable and the fixed state.
struct ReachabilityTests {
    @Test func environmentOverride() throws {
        #expect(try EnvironmentReachability(environment: [:]) == nil)
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "cellular"])?.state == NetworkState(.cellular))
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "wifi,expensive,constrained"])?.state
                == NetworkState(.wifi, isExpensive: true, isConstrained: true))
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "cellular,roaming"])?.state
                == NetworkState(.cellular, isExpensive: true, isRoaming: true))
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "wifi,captive"])?.state
                == NetworkState(.wifi, isCaptive: true))
        #expect(throws: EnvironmentReachability.InvalidValue(value: "lte")) {
            try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "lte"])
        }
        #expect(throws: EnvironmentReachability.InvalidValue.self) {
            try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "wifi,cheap"])
        }
    }

    @Test("a state's text reads back as the same state",
          arguments: ["wifi", "cellular,expensive", "wired,constrained", "cellular,expensive,roaming", "wifi,captive",
                      "unknown,expensive,constrained,roaming,captive"])
    func stateTextRoundTrips(_ text: String) throws {
        let state = try #require(NetworkState(parsing: text))
        #expect(state.description == text)
        #expect(NetworkState(parsing: state.description) == state)
    }

    @Test func roamingIsExpensive() {
        #expect(NetworkState(.cellular, isRoaming: true).isExpensive)
        #expect(NetworkState(parsing: "cellular,roaming")?.description == "cellular,expensive,roaming")
    }

    @Test func fixedProviderPublishesUpdatesOnce() async throws {
        let provider = FixedReachability(NetworkState(.wifi))
        var iterator = provider.stateChanges().makeAsyncIterator()
        #expect(try await withDeadline("the current state") { await iterator.next() } == NetworkState(.wifi))
        provider.update(to: NetworkState(.wifi))  // unchanged: not published
        provider.update(to: NetworkState(.cellular, isExpensive: true))
        provider.update(to: .offline)
        #expect(try await withDeadline("cellular") { await iterator.next() } == NetworkState(.cellular, isExpensive: true))
        #expect(try await withDeadline("offline") { await iterator.next() } == .offline)
        #expect(provider.currentState == .offline)
    }
}
