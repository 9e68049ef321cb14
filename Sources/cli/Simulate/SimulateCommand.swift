import ArgumentParser
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Simulation
import Support

/// `imgpolicy simulate`: a list scrolled on a changing network against a server of its own, the
/// SDK's list against the naive baseline, with the issue's goals checked (docs/simulate.md).
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Scroll a list on a scripted network against a local server: the SDK against a naive list.",
        discussion: """
            Starts an HTTP server on 127.0.0.1 (--latency per URL, bodies of the given sizes), \
            scrolls N items through reused cells (reading pauses, drags and flings averaging \
            --rows-per-second), first with the SDK's list over a fresh temporary cache (removed at \
            the end), then with a naive list (every visible row downloads its original; nothing \
            cancelled, coalesced or cached), following --network-script. The user's settings and \
            cache are not used. With --photos DIR and --display-width PX (the CDN mode, \
            docs/simulate.md), every width of the photo ladders of scripts/cdn-photos.sh is served \
            and each row is a template item. Exit status: 0; 1 the SDK delivered an image to the \
            wrong cell or a stale event, or transferred a URL twice; 64 usage error (a bad \
            --latency, --network-script, size, count, seed or --display-width, an unknown policy, \
            --set of a setting the policy does not declare, a bad --connections-per-host, --photos \
            without --display-width); 65 a bad policy file or photo folder (a damaged manifest, a \
            file that is not an image of its width); 66 a policy file or photo file that cannot be read; \
            74 the server or the temporary cache could not be set up, or loads failed for want of \
            descriptors, threads, memory or disk (the figures then measure nothing).
            """
    )

    // The numbers and ranges below take their value as given (`.unconditional`), so that `--items
    // -1` says that -1 is not a count rather than "Missing value" (a value starting with "-" is
    // otherwise taken for an option).
    @Option(parsing: .unconditional, help: ArgumentHelp("How many items the list holds (1–100000).", valueName: "n"))
    var items = 200

    @Option(parsing: .unconditional, help: ArgumentHelp("How many rows are on screen at once (1–100).", valueName: "v"))
    var visible = 10

    @Option(name: .customLong("rows-per-second"), parsing: .unconditional, help: ArgumentHelp("The user's average scrolling speed (0.1–10000).", valueName: "r"))
    var rowsPerSecond = 20.0

    @Option(parsing: .unconditional, help: ArgumentHelp("The server's delay before each response, drawn per URL (ms).", valueName: "min-max"))
    var latency = "20-80"

    @Option(name: .customLong("original-bytes"), parsing: .unconditional, help: ArgumentHelp("The size of each original (96–16000000).", valueName: "bytes"))
    var originalBytes = 200_000

    @Option(name: .customLong("thumbnail-bytes"), parsing: .unconditional, help: ArgumentHelp("The size of each thumbnail (96–16000000).", valueName: "bytes"))
    var thumbnailBytes = 20_000

    @Option(name: .customLong("network-script"),
            help: ArgumentHelp("Network states and when they start, as IMGPOLICY_NETWORK writes them: cellular@0s,wifi@10s,offline@20s.", valueName: "state@time,…"))
    var networkScript = "cellular@0s,wifi@10s"

    @Option(help: ArgumentHelp("A bundled policy's name or a policy file.", valueName: "name|file"))
    var policy = "default"

    @Option(name: .customLong("set"), help: ArgumentHelp("A setting for the run (the policy must declare it).", valueName: "key=value"))
    var overrides: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("The seed of the scroll gestures and the latencies (0–18446744073709551615).", valueName: "s"))
    var seed = "1"

    @Option(name: .customLong("connections-per-host"), parsing: .unconditional,
            help: ArgumentHelp("The connections each pass's transport may open to the server (1–64; default 6, the transport's standard).", valueName: "n"))
    var connectionsPerHost = TransportConfiguration.standard.maximumConnectionsPerHost

    @Option(name: .customLong("photos"),
            help: ArgumentHelp("CDN mode: serve the photo ladders of this folder (made by scripts/cdn-photos.sh) at every width; each row is a template item.",
                               valueName: "dir"))
    var photos: String?

    @Option(name: .customLong("display-width"), parsing: .unconditional,
            help: ArgumentHelp("Every row's width on screen in pixels, given to the list (1–1000000; default: unknown).", valueName: "px"))
    var displayWidth: Int?

    @Flag(help: "One JSON object instead of the report.")
    var json = false

    /// The options, checked: one line naming the flag for each mistake (exit 64).
    struct Checked {
        var latency: LatencyRange
        var script: NetworkScript
        var seed: UInt64
    }

    func checked() throws -> Checked {
        func usage(_ text: String) -> CommandFailure { CommandFailure.usage(text) }
        guard (1...100_000).contains(items) else { throw usage("--items \(items): expected a count from 1 to 100000") }
        guard (1...100).contains(visible) else { throw usage("--visible \(visible): expected a count from 1 to 100") }
        guard rowsPerSecond.isFinite, rowsPerSecond >= 0.1, rowsPerSecond <= 10_000 else {
            throw usage("--rows-per-second \(rowsPerSecond): expected a speed from 0.1 to 10000")
        }
        // The simulation runs in real time, twice (the list, then the baseline).
        guard Double(items) / rowsPerSecond <= NetworkScript.longest else {
            throw usage("--items \(items) at --rows-per-second \(rowsPerSecond): the scroll would last \(Int(Double(items) / rowsPerSecond)) s, longer than \(Int(NetworkScript.longest)) s (it runs in real time)")
        }
        for (flag, value) in [("--original-bytes", originalBytes), ("--thumbnail-bytes", thumbnailBytes)]
        where !(SimulationServer.smallestBody...16_000_000).contains(value) {
            throw usage("\(flag) \(value): expected a size from \(SimulationServer.smallestBody) to 16000000 bytes")
        }
        guard let latency = LatencyRange(parsing: latency) else {
            throw usage("--latency \(TerminalText.escaped(latency)): expected MIN-MAX in milliseconds (e.g. 20-80), MIN ≤ MAX ≤ \(LatencyRange.limit)")
        }
        let script: NetworkScript
        do {
            script = try NetworkScript(parsing: networkScript)
        } catch {
            throw usage("--network-script \(TerminalText.escaped(networkScript)): \(error.description)")
        }
        guard (1...64).contains(connectionsPerHost) else {
            throw usage("--connections-per-host \(connectionsPerHost): expected a count from 1 to 64")
        }
        if let photos {
            guard !photos.isEmpty else { throw usage("--photos \"\": expected a folder made by scripts/cdn-photos.sh") }
            guard displayWidth != nil else {
                throw usage("--photos needs --display-width: the width every row shows, which the report measures the images against")
            }
        }
        if let displayWidth, !(1...ImageItem.maximumWidth).contains(displayWidth) {
            throw usage("--display-width \(displayWidth): expected a width from 1 to \(ImageItem.maximumWidth) pixels")
        }
        guard let seed = UInt64(seed) else { throw usage("--seed \(TerminalText.escaped(seed)): expected a whole number from 0 to 18446744073709551615") }
        return Checked(latency: latency, script: script, seed: seed)
    }

    /// The policy's settings with their declared defaults and the `--set` values.
    static func settings(_ overrides: [String], for policy: ImagePolicy) throws -> [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        for declaration in policy.settings { values[declaration.key] = .bool(declaration.defaultValue) }
        for text in overrides {
            do throws(SettingOverrideError) {
                let override = try SettingOverride(parsing: text, in: policy)
                values[override.key] = .bool(override.value)
            } catch {
                throw CommandFailure.usage("--set \(TerminalText.escaped(text)): \(error)")
            }
        }
        return values
    }

    func run() async throws {
        TemporaryCacheFolder.listenForStopSignals()
        let options = try checked()
        let policy = try PolicyLocator.load(self.policy)
        let settings = try Self.settings(overrides, for: policy)
        let ladders = try photos.map { folder throws(DataFileError) in try PhotoLadders(folder: folder) }
        let report: SimulationReport
        do {
            report = try await Simulation.run(.init(items: items, visible: visible, rowsPerSecond: rowsPerSecond, latency: options.latency,
                                                    originalBytes: originalBytes, thumbnailBytes: thumbnailBytes, script: options.script,
                                                    policy: policy, settings: settings, seed: options.seed,
                                                    connectionsPerHost: connectionsPerHost, photos: ladders, displayWidth: displayWidth))
        } catch {
            throw CommandFailure(error.description, status: .ioError)
        }
        let output = json ? JSONWriter.compactText(of: report.json) + "\n" : report.text
        FileHandle.standardOutput.write(Data(output.utf8))
        if report.ranShortOfResources {
            let screen = report.sdk.screen
            throw CommandFailure("simulate: \(screen.resourceFailures) of the SDK's loads failed for want of resources, so its figures measure nothing "
                                 + "(the first: \(screen.firstResourceFailure ?? "?"))", status: .ioError)
        }
        if report.failed {
            let sdk = report.sdk
            throw CommandFailure("the SDK's list made \(sdk.screen.wrongSlotDeliveries) wrong-slot and \(sdk.screen.staleDeliveries) stale deliveries and \(sdk.server.duplicateTransfers) duplicate transfers",
                                 status: .notSet)
        }
    }
}
