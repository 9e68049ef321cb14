import Fetch
import Policy
import Support

/// `imgpolicy simulate` as a library: a list scrolled through reused cells on a scripted network
/// against a loopback server of its own, first with the SDK's list (a loader, a pipeline and a
/// libcurl transport over a fresh temporary disk cache), then with the articles' naive list, and
/// the report of both (docs/simulate.md). The command only parses its options and prints the report.
package struct Simulation {
    /// What to simulate.
    package struct Setup {
        package var items: Int
        package var visible: Int
        package var rowsPerSecond: Double
        package var latency: LatencyRange
        package var originalBytes: Int
        package var thumbnailBytes: Int
        package var script: NetworkScript
        package var policy: ImagePolicy
        package var settings: [String: SettingValue]
        package var seed: UInt64
        /// The connections each pass's transport may open to the server (its host): the
        /// transport's standard 6 unless told; the limit in all is raised to it when it is larger
        /// than the standard 8.
        package var connectionsPerHost: Int
        /// CDN mode: the photographs served at every width; each row's item is a template.
        package var photos: PhotoLadders?
        /// Every row's width on screen in pixels (nil: unknown), given to the list.
        package var displayWidth: Int?

        package init(items: Int, visible: Int, rowsPerSecond: Double, latency: LatencyRange, originalBytes: Int,
                     thumbnailBytes: Int, script: NetworkScript, policy: ImagePolicy, settings: [String: SettingValue], seed: UInt64,
                     connectionsPerHost: Int = TransportConfiguration.standard.maximumConnectionsPerHost,
                     photos: PhotoLadders? = nil, displayWidth: Int? = nil) {
            self.photos = photos
            self.displayWidth = displayWidth
            self.items = items
            self.visible = visible
            self.rowsPerSecond = rowsPerSecond
            self.latency = latency
            self.originalBytes = originalBytes
            self.thumbnailBytes = thumbnailBytes
            self.script = script
            self.policy = policy
            self.settings = settings
            self.seed = seed
            self.connectionsPerHost = connectionsPerHost
        }

        /// The transport configuration of both passes: the standard one with `connectionsPerHost`.
        var transport: TransportConfiguration {
            var configuration = TransportConfiguration.standard
            configuration.maximumConnectionsPerHost = connectionsPerHost
            configuration.maximumConnections = max(configuration.maximumConnections, connectionsPerHost)
            return configuration
        }
    }

    /// Runs both passes in real time and reports them.
    /// - Throws: `SimulationSetupError` when the server or the temporary cache cannot be set up.
    package static func run(_ setup: Setup) async throws(SimulationSetupError) -> SimulationReport {
        TemporaryCacheFolder.listenForStopSignals()
        let server: SimulationServer
        do {
            server = try SimulationServer(.init(items: setup.items, originalBytes: setup.originalBytes, thumbnailBytes: setup.thumbnailBytes,
                                                latency: setup.latency, seed: setup.seed, photos: setup.photos))
        } catch {
            throw SimulationSetupError(description: error.description)
        }
        defer { server.stop() }
        let itemList = (0..<setup.items).compactMap { server.item(row: $0) }
        let plan = ScrollPlan.make(items: setup.items, visible: setup.visible, rowsPerSecond: setup.rowsPerSecond, seed: setup.seed)
        // Long enough after the last step for the slowest load to arrive and be checked.
        let endTime = max(plan.duration, setup.script.lastChange) + 0.5 + 4 * Double(setup.latency.maximum) / 1000
        let pass = SimulationPass(plan: plan, script: setup.script, server: server, endTime: endTime)

        let sdk = try await runSDK(pass: pass, items: itemList, setup: setup)
        let baseline = await runBaseline(pass: pass, items: itemList, visible: setup.visible, transport: setup.transport)
        server.stop()
        return SimulationReport(
            setup: .init(items: setup.items, visible: setup.visible, rowsPerSecond: setup.rowsPerSecond, latency: setup.latency,
                         originalBytes: setup.originalBytes, thumbnailBytes: setup.thumbnailBytes, script: setup.script,
                         policy: setup.policy.name, seed: setup.seed, plan: plan, latencyDigest: server.latencyDigest,
                         connectionsPerHost: setup.connectionsPerHost, photos: setup.photos, displayWidth: setup.displayWidth),
            sdk: sdk, baseline: baseline)
    }

    /// The SDK pass: the list over a loader, a pipeline and a libcurl transport, with a fresh
    /// disk cache in a temporary folder removed afterwards.
    @MainActor
    private static func runSDK(pass: SimulationPass, items: [ImageItem], setup: Setup) async throws(SimulationSetupError) -> SimulationPass.Result {
        let folder: TemporaryCacheFolder
        do {
            folder = try TemporaryCacheFolder()
        } catch let error as SimulationSetupError {
            throw error
        } catch {
            throw SimulationSetupError(description: "\(error)")
        }
        defer { folder.remove() }
        let disk: DiskCache
        do {
            disk = try DiskCache(folder: folder.path)
        } catch {
            throw SimulationSetupError(description: "cannot open the simulation's cache in \(folder.path): \(error)")
        }
        let policy = setup.policy
        let reachability = FixedReachability(pass.script.entries[0].state)
        let transport = CurlTransport(configuration: setup.transport)
        let pipeline = ImagePipeline(downloader: transport, disk: disk, diskWrites: .waitWhenFull)
        let store = InMemorySettingsStore(setup.settings)
        let loader = ImageLoader(policy: policy, reachability: reachability, settings: store, pipeline: pipeline)
        let displayWidth = setup.displayWidth
        let result = await pass.run(items: items, visibleCount: setup.visible,
                                    makeList: { ImageListAdapter(loader: loader, screen: $0, displayWidth: displayWidth) },
                                    networkChanged: { reachability.update(to: $0) },
                                    decidesBetter: { item, shownRank, state in
                                        guard let settings = try? policy.resolveSettings(from: store) else { return false }
                                        let decision = policy.decide(item, network: state, settings: settings, cache: pipeline,
                                                                     displayWidth: displayWidth)
                                        guard let variant = decision.variant, let url = decision.url else { return false }
                                        return Screen.rank(of: item, variant, at: url) > shownRank
                                    })
        await pipeline.flush()
        await transport.shutdown()
        return result
    }

    /// The baseline pass: plain downloads with a transport of its own, no cache.
    @MainActor
    private static func runBaseline(pass: SimulationPass, items: [ImageItem], visible: Int,
                                    transport configuration: TransportConfiguration) async -> SimulationPass.Result {
        let transport = CurlTransport(configuration: configuration)
        let result = await pass.run(items: items, visibleCount: visible, makeList: { NaiveList(transport: transport, screen: $0) },
                                    networkChanged: { _ in }, decidesBetter: { _, _, _ in false })
        await transport.shutdown()
        return result
    }
}
