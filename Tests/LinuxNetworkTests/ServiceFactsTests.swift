import Foundation
@testable import LinuxNetwork
import Policy
import Testing
import TestSupport

/// NetworkManager and ModemManager over a private D-Bus daemon (python3-dbusmock stand-ins):
/// metered, captive and roaming reach the state, each change as it is signalled; missing buses
/// and services leave facts unknown with a reason; late ones are picked up.
@Suite(.enabled(if: PrivateSystemBus.isAvailable, Comment(rawValue: PrivateSystemBus.unavailableReason ?? "")))
struct ServiceFactsTests {
    /// A provider over a fake sysfs tree holding one link of `kind`, on the bus at `address`.
    func provider(_ kind: String = "eth0", address: String) throws -> (LinuxReachability, FakeNetworkTree) {
        let tree = FakeNetworkTree()
        if kind == "wwan0" { try tree.add("wwan0", devtype: "wwan") } else { try tree.add(kind) }
        try tree.routes([(kind, 100)])
        let configuration = LinuxReachability.Configuration(detector: tree.detector, systemBusAddress: address,
                                                            busCallTimeout: .milliseconds(500))
        return (try LinuxReachability(configuration: configuration), tree)
    }

    func waitFor(_ provider: LinuxReachability, _ expected: NetworkState) async -> Bool {
        await waitUntil { provider.currentState == expected }
    }

    @Test func meteredFromNetworkManagerAndItsChanges() async throws {
        let bus = try await PrivateSystemBus()
        try await bus.startNetworkManager(metered: 2)
        let (provider, _) = try provider(address: bus.address)
        await provider.servicesAsked()
        #expect(provider.serviceFacts.metered == NetworkFact(false, "NetworkManager: Metered is no (2)"))
        #expect(provider.currentState == NetworkState(.wired))
        var changes = provider.stateChanges().makeAsyncIterator()
        #expect(try await withDeadline("the first state") { await changes.next() } == NetworkState(.wired))

        try bus.setMetered(1)
        #expect(try await withDeadline("metered yes") { await changes.next() } == NetworkState(.wired, isExpensive: true))
        try bus.setMetered(3)  // guess-yes: still metered, nothing new to publish
        #expect(await waitUntil { provider.serviceFacts.metered.explanation.contains("guess-yes") })
        try bus.setMetered(4)  // guess-no
        #expect(try await withDeadline("metered guess-no") { await changes.next() } == NetworkState(.wired))
        #expect(provider.activity.published == 2)
        await provider.shutdown()
    }

    @Test func captivePortalFromConnectivity() async throws {
        let bus = try await PrivateSystemBus()
        try await bus.startNetworkManager(metered: 0)
        let (provider, _) = try provider(address: bus.address)
        try bus.setConnectivity(2)
        #expect(await waitFor(provider, NetworkState(.wired, isCaptive: true)), "\(provider.serviceFacts)")
        #expect(provider.serviceFacts.metered.value == nil)  // Metered 0: unknown, and says so
        #expect(provider.serviceFacts.metered.explanation.contains("unknown (0)"))
        try bus.setConnectivity(4)
        #expect(await waitFor(provider, NetworkState(.wired)))
        try bus.setConnectivity(3)
        #expect(await waitFor(provider, NetworkState(.wired, isCaptive: true)))
        await provider.shutdown()
    }

    @Test func roamingFromModemManager() async throws {
        let bus = try await PrivateSystemBus()
        try await bus.startModemManager()
        let (provider, _) = try provider("wwan0", address: bus.address)
        await provider.servicesAsked()
        #expect(provider.serviceFacts.roaming == NetworkFact(false, "ModemManager: no modem with a 3GPP registration"))
        let modem = try bus.addModem(registration: 1)
        #expect(await waitUntil { provider.serviceFacts.roaming.explanation.contains("home (1)") }, "\(provider.serviceFacts)")
        #expect(provider.currentState == NetworkState(.cellular, isExpensive: true))
        try bus.setRegistration(modem, 5)
        #expect(await waitFor(provider, NetworkState(.cellular, isRoaming: true)), "\(provider.serviceFacts)")
        try bus.setRegistration(modem, 1)
        #expect(await waitFor(provider, NetworkState(.cellular, isExpensive: true)))
        await provider.shutdown()
    }

    @Test func missingServicesAreUnknownAndLateOnesArePickedUp() async throws {
        let bus = try await PrivateSystemBus()
        let (provider, _) = try provider(address: bus.address)
        await provider.servicesAsked()
        #expect(provider.serviceFacts.metered.value == nil)
        #expect(provider.serviceFacts.metered.explanation.contains("NetworkManager is not running"))
        #expect(provider.serviceFacts.roaming.explanation.contains("ModemManager is not running"))
        try await bus.startNetworkManager(metered: 1)
        // The name appearing makes the provider look (and look again while NetworkManager's
        // objects are not there yet): AddProperty itself signals nothing.
        #expect(await waitFor(provider, NetworkState(.wired, isExpensive: true)), "\(provider.serviceFacts)")
        bus.stopServices()
        #expect(await waitUntil { provider.serviceFacts.metered.explanation.contains("not running") })
        #expect(await waitFor(provider, NetworkState(.wired)))
        await provider.shutdown()
    }

    @Test func noBusIsUnknownAndABusThatAppearsLaterIsPickedUp() async throws {
        let folder = TemporaryFolder()
        let address = "unix:path=" + folder.file("later/system_bus_socket")
        let (provider, _) = try provider(address: address)
        await provider.servicesAsked()
        #expect(provider.serviceFacts.metered.value == nil)
        #expect(provider.serviceFacts.metered.explanation.contains("no system bus"), "\(provider.serviceFacts)")
        #expect(provider.currentState == NetworkState(.wired))
        _ = provider  // the retry (1 s, then 2 s…) finds the bus once it exists
        try FileManager.default.createDirectory(atPath: folder.file("later"), withIntermediateDirectories: true)
        let bus = try await PrivateSystemBus(address: address)
        try await bus.startNetworkManager(metered: 1)
        #expect(await waitFor(provider, NetworkState(.wired, isExpensive: true)), "\(provider.serviceFacts)")
        await provider.shutdown()
    }

    @Test func theSystemBusAddressVariableIsHonoured() async throws {
        let bus = try await PrivateSystemBus()
        try await bus.startNetworkManager(metered: 3)
        let executable = ProbeProcess.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the package first: \(executable) is missing")
        let result = try ProcessResult.run(executable, ["watch"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address],
                                           stdin: Data("activity\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("yes: NetworkManager: Metered is guess-yes (3)"), "\(result.stdout)")
    }

    @Test("raw values are read as documented", arguments: [
        (UInt32(0), Bool?.none), (1, true), (2, false), (3, true), (4, false), (9, nil),
    ])
    func meteredValues(_ raw: UInt32, _ expected: Bool?) {
        #expect(ServiceFacts.metered(networkManagerValue: raw).value == expected)
    }

    @Test func connectivityAndRegistrationValues() async {
        #expect([0, 1, 2, 3, 4].map { ServiceFacts.captive(networkManagerConnectivity: $0).value } == [nil, true, true, true, false])
        #expect(ServiceFacts.roaming(registrationStates: [1]).value == false)
        #expect(ServiceFacts.roaming(registrationStates: [5]).value == true)
        #expect(ServiceFacts.roaming(registrationStates: [7]).value == true)
        #expect(ServiceFacts.roaming(registrationStates: [10]).value == true)
        #expect(ServiceFacts.roaming(registrationStates: [1, 10]).value == true)
        #expect(ServiceFacts.roaming(registrationStates: [99]).explanation.contains("unknown value (99)"))
    }

    @Test func combining() async {
        let facts = ServiceFacts(metered: NetworkFact(true, ""), captive: NetworkFact(true, ""), roaming: NetworkFact(true, ""))
        #expect(LinuxReachability.combine(NetworkState(.cellular, isExpensive: true), facts)
                == NetworkState(.cellular, isExpensive: true, isRoaming: true, isCaptive: true))
        // A roaming modem behind Wi-Fi carries nothing; offline stays offline.
        #expect(LinuxReachability.combine(NetworkState(.wifi), facts) == NetworkState(.wifi, isExpensive: true, isCaptive: true))
        #expect(LinuxReachability.combine(.offline, facts) == .offline)
    }
}
