import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport

extension TransportConfiguration {
    /// The standard configuration with timeouts no test reaches while a gate holds an answer.
    /// ThreadSanitizer on a loaded machine can starve a test for minutes between two of its steps;
    /// with the standard 15 s low-speed window, an answer held that long (sending nothing) was
    /// aborted as a timeout and retried: a second request the test never made
    /// (`cancellingOneWaiterLeavesTheOthersTheirImage` saw 2 hits). Tests of the timeouts
    /// themselves use configurations of their own (`CurlTransportTests`).
    static var patient: TransportConfiguration {
        var configuration = TransportConfiguration.standard
        configuration.lowSpeedTime = .seconds(600)
        configuration.totalTimeout = .seconds(600)
        return configuration
    }
}
