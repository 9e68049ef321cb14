import Policy
import Testing

/// The portable providers: the environment variable and the fixed state.
struct ReachabilityTests {
    @Test func environmentOverride() throws {
        #expect(try EnvironmentReachability(environment: [:]) == nil)
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "cellular"])?.state == NetworkState(.cellular))
        #expect(try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "wifi,expensive,constrained"])?.state
                == NetworkState(.wifi, isExpensive: true, isConstrained: true))
        #expect(throws: EnvironmentReachability.InvalidValue(value: "lte")) {
            try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "lte"])
        }
        #expect(throws: EnvironmentReachability.InvalidValue.self) {
            try EnvironmentReachability(environment: ["IMGPOLICY_NETWORK": "wifi,cheap"])
        }
    }

    @Test func fixedProviderPublishesUpdatesOnce() async {
        let provider = FixedReachability(NetworkState(.wifi))
        var iterator = provider.stateChanges().makeAsyncIterator()
        #expect(await iterator.next() == NetworkState(.wifi))
        provider.update(to: NetworkState(.wifi))  // unchanged: not published
        provider.update(to: NetworkState(.cellular, isExpensive: true))
        provider.update(to: .offline)
        #expect(await iterator.next() == NetworkState(.cellular, isExpensive: true))
        #expect(await iterator.next() == .offline)
        #expect(provider.currentState == .offline)
    }
}
