import ArgumentParser
import Decoding
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Policy
#if canImport(LinuxNetwork)
import LinuxNetwork
#endif
import Support

/// `imgpolicy [decide]`: the decision for each item of an item file.
struct Decide: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decide what to show for each item (the default command).",
        discussion: """
            Network precedence: --network, then $IMGPOLICY_NETWORK (e.g. "cellular,expensive"), then \
            detection. An image counts as cached when the disk cache holds it, or, instead, when \
            --cached says so. --fetch carries the decisions out (offline, nothing touches the network).
            """
    )

    @Option(help: ArgumentHelp("The item file: one item object or an array of them; - reads standard input.", valueName: "file"))
    var item: String

    @Option(help: ArgumentHelp("The network state as IMGPOLICY_NETWORK writes it (a kind, optionally followed by ,expensive ,constrained ,roaming ,captive; any case), or auto to detect it.",
                               valueName: "wifi|cellular|wired|offline|unknown|auto"))
    var network = "auto"

    @Flag(help: "The network is metered (hotspot, tethering).")
    var expensive = false

    @Flag(help: "The user asked to save data (Low Data Mode, Data Saver).")
    var constrained = false

    @Flag(help: "The modem is roaming (implies --expensive).")
    var roaming = false

    @Flag(help: "The link is behind a captive portal or has no internet (a policy that does not test it sees offline).")
    var captive = false

    // `.unconditional`: `--throughput -5` is a bad number, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("The measured throughput of the link, in bytes per second (a policy testing \"slow\" compares it with its slowBelow).",
                               valueName: "bytes-per-second"))
    var throughput: String?

    @Option(help: ArgumentHelp("A bundled policy's name or a policy file.", valueName: "name|file"))
    var policy = "default"

    @OptionGroup var settings: SettingsLocation

    @Option(name: .customLong("set"), help: ArgumentHelp("Override a setting for this run only; nothing is written.", valueName: "key=value"))
    var overrides: [String] = []

    @Option(help: ArgumentHelp("Assume this variant of every item is cached (repeatable).", valueName: "original|thumbnail"))
    var cached: [Variant] = []

    @Flag(help: "One JSON object per item, one per line: action, variant, url, rule, reason, network.")
    var json = false

    @Flag(help: "Print the rules tried and why each did or did not match (to standard error with --json).")
    var explain = false

    @Flag(help: "Carry the decisions out: load each image from the caches or the network.")
    var fetch = false

    @OptionGroup var cache: CacheLocation

    @Option(help: ArgumentHelp("With --fetch and one item: write the image bytes to this file (a regular file is replaced atomically; a device or FIFO is written to); no image to write (the placeholder) is exit 69, the file left as it was.", valueName: "file"))
    var output: String?

    @OptionGroup var sizing: SizeOption

    @OptionGroup var logging: LoggingOptions

    /// The options as plain values, which the run reads.
    var options: DecisionOptions {
        DecisionOptions(item: item, network: NetworkChoice(parsing: network) ?? .auto, expensive: expensive, constrained: constrained, roaming: roaming,
                        captive: captive, throughput: throughput, policy: policy, settingsPath: settings.path,
                        overrides: overrides, cached: cached, json: json, explain: explain, fetch: fetch,
                        cachePath: cache.path, output: output, size: sizing.size, verbose: logging.verbose)
    }

    func validate() throws {
        guard NetworkChoice(parsing: network) != nil else { throw ValidationError(NetworkChoice.invalidMessage(network)) }
        try options.validate()
    }

    func run() async throws {
        try await options.run()
    }
}

/// The options of `imgpolicy [decide]` as plain values, and the run that reads them: what
/// `Decide` parsed with swift-argument-parser, or what `QuickDecide` read itself (a plain
/// decision, without making swift-argument-parser's property wrappers).
struct DecisionOptions {
    var item: String
    var network: NetworkChoice = .auto
    var expensive = false
    var constrained = false
    var roaming = false
    var captive = false
    var throughput: String?
    var policy = "default"
    var settingsPath: String?
    var overrides: [String] = []
    var cached: [Variant] = []
    var json = false
    var explain = false
    var fetch = false
    var cachePath: String?
    var output: String?
    var size: SizeOption.Box?
    var verbose = 0

    /// What `Decide.validate()` refuses (swift-argument-parser reports it).
    func validate() throws {
        if output != nil && !fetch { throw ValidationError("--output needs --fetch") }
        // Checked before anything is fetched, cached or recorded.
        if output == "-" { throw ValidationError(ImageOutput.standardOutputMessage) }
    }

    /// `--throughput`, checked: a decimal number of bytes per second from 0 to 10^15.
    private func estimate() throws -> LinkEstimate? {
        guard let throughput else { return nil }
        // Decimal only: Double("0x10") would read hexadecimal, Double("nan") and Double("inf") are refused below.
        guard throughput.allSatisfy({ "0123456789.eE+-".contains($0) }), let bytes = Double(throughput), bytes.isFinite, bytes >= 0, bytes <= 1e15 else {
            throw CommandFailure.usage("--throughput \(TerminalText.escaped(String(throughput.prefix(40)))): expected a number of bytes per second from 0 to 1000000000000000")
        }
        return LinkEstimate(bytesPerSecond: bytes)
    }

    /// What every run decides with: read and checked from the command line and its files.
    private struct Setup {
        var logger: Logger
        var policy: ImagePolicy
        var settings: ResolvedSettings
        var reachability: any ReachabilityProviding
        var items: [ImageItem]
        var estimate: LinkEstimate?
    }

    /// Reads the policy, the items and the settings, in the order their errors are reported.
    private func setUp() throws -> Setup {
        let estimate = try estimate()
        let environment = ProcessEnvironment.variables
        // Passed as `logger:` to the library types this command creates.
        let logger = try LoggingOptions.logger(verbose: verbose, environment: environment)
        let policy = try PolicyLocator.load(policy)
        logger.debug("policy loaded", metadata: ["policy": "\(policy.name)", "rules": "\(policy.rules.count)"])
        let overrides = try parseOverrides(for: policy)
        let provider = try networkProvider(environment: environment)
        let items = try reporting { try ImageItem.load(contentsOf: item) }
        logger.debug("items read", metadata: ["file": "\(item)", "count": "\(items.count)"])
        let store = try SettingsLocation.store(path: settingsPath)
        var resolved = try reporting { try policy.resolveSettings(from: store) }
        for (position, value) in overrides {
            if value { resolved.bits |= 1 << position } else { resolved.bits &= ~(1 << position) }
        }
        if fetch && !cached.isEmpty {
            throw CommandFailure.usage("--cached cannot be combined with --fetch: --cached imagines what is cached, --fetch uses the real cache")
        }
        if (output != nil || size != nil) && items.count != 1 {
            throw CommandFailure.usage("--\(output != nil ? "output" : "size") writes one image, but \(item) holds \(items.count) items")
        }
        return Setup(logger: logger, policy: policy, settings: resolved, reachability: provider, items: items, estimate: estimate)
    }

    /// Decides every item against `knownCache`, reading the network state once; the text of
    /// the decisions (unless `--fetch`, which prints results instead) and of `--explain`.
    private func decideAll(_ setup: Setup, cache knownCache: any CacheInspecting) -> (decider: ItemDecider, decisions: [Decision], output: String) {
        let decider = ItemDecider(policy: setup.policy, settings: setup.settings, cache: knownCache, reachability: setup.reachability,
                                  expensive: expensive, constrained: constrained, roaming: roaming, captive: captive,
                                  estimate: setup.estimate)
        setup.logger.info("network state read", metadata: ["network": "\(decider.network)"])
        var decisions: [Decision] = []
        var output = ""
        for item in setup.items {
            let (decision, input) = decider.decide(item, displayWidth: size?.width)
            decisions.append(decision)
            setup.logger.trace("decided", metadata: ["item": "\(item.id ?? item.original.absoluteString)", "decision": "\(decision)"])
            if explain {
                let trace = explanation(policy: setup.policy, input: input, item: item)
                if json { FileHandle.standardError.write(text: trace) } else { output += trace }
            }
            if !fetch { output += (json ? jsonLine(decision) : textLine(decision, item: item)) + "\n" }
        }
        return (decider, decisions, output)
    }

    /// A run without `--fetch`: synchronous, so that the command's fast path (`QuickDecide`)
    /// starts no thread of the concurrency runtime. Decisions consult the disk cache's index
    /// (a missing or empty cache folder is not opened: `CacheLocation.openUnlessEmpty`), unless
    /// `--cached` says what to assume.
    func decideWithoutFetching() throws {
        let setup = try setUp()
        let knownCache: any CacheInspecting
        if !cached.isEmpty {
            knownCache = StaticCacheContents(assuming: cached.reduce(into: CachedVariants()) { $0.insert(CachedVariants($1)) })
        } else {
            knownCache = try CacheLocation.openUnlessEmpty(path: cachePath, logger: setup.logger) ?? StaticCacheContents.empty
        }
        FileHandle.standardOutput.write(text: decideAll(setup, cache: knownCache).output)
    }

    func run() async throws {
        guard fetch else { return try decideWithoutFetching() }
        let setup = try setUp()
        let logger = setup.logger
        // The fetch carries decisions out through the pipeline; decisions consult the real caches
        // (the pipeline's, else the disk cache's index).
        if let output { try ImageOutput.checkBeforeFetching(output) }
        let disk = try CacheLocation.open(path: cachePath, logger: logger)
        let transport = CurlTransport(logger: logger)
        let pipeline = ImagePipeline(downloader: transport, disk: disk, diskWrites: .waitWhenFull,
                                     http: SizeOption.http(HTTPOptions.standard.following(setup.policy), decodingTo: size),
                                     logger: logger)
        let (decider, decisions, explained) = decideAll(setup, cache: pipeline)
        // The explanations first, then each item's line as it is ready (streamed), then usage.
        FileHandle.standardOutput.write(text: explained)
        let run = FetchRun(pipeline: pipeline, json: json, size: size, policy: setup.policy, network: decider.network,
                           settings: setup.settings, logger: logger)
        let results = await run.run(items: setup.items, decisions: decisions)
        await transport.shutdown()
        // A body that does not decode was downloaded (and counted) all the same: the report and
        // its usage line come first, then the decoding failure (exit 65).
        let decoded = try results.decoded.get()
        if let path = self.output {
            if let image = results.image {
                try ImageOutput.write(try decoded.map(SizeOption.png) ?? ImageBytes(image.bytes), to: path)
            } else if results.failure == nil {
                // A script must not go on to show an older picture left at that path: exit 69
                // (nothing to show, as offline and not cached), the file as it was.
                let rule = results.placeholder.map { " (rule \($0.rule))" } ?? ""
                throw CommandFailure("\(path): nothing written: the decision is the placeholder\(rule); the file is left as it was",
                                     status: .unavailable)
            }
        }
        if let failure = results.failure { throw failure }
    }

    /// `--set` values, as (setting position, value).
    private func parseOverrides(for policy: ImagePolicy) throws -> [(Int, Bool)] {
        try overrides.map { text in
            guard let equals = text.firstIndex(of: "=") else {
                throw CommandFailure.usage("--set \(text): expected key=value")
            }
            let key = String(text[..<equals])
            let valueText = String(text[text.index(after: equals)...])
            guard let position = policy.settingPosition(key) else {
                let known = policy.settings.map(\.key).joined(separator: ", ")
                throw CommandFailure.usage("--set \(text): the policy \"\(policy.name)\" reads no setting \"\(key)\" (it reads: \(known.isEmpty ? "none" : known))")
            }
            guard let value = SettingValue.parseBool(valueText) else {
                throw CommandFailure.usage("--set \(text): \"\(valueText)\" is not a boolean (true/false, yes/no, on/off, 1/0)")
            }
            return (position, value)
        }
    }

    /// Where the network state comes from: --network, then $IMGPOLICY_NETWORK, then detection
    /// (done here, once). `ItemDecider` reads the provider once and adds the flags.
    private func networkProvider(environment: [String: String]) throws -> any ReachabilityProviding {
        switch network {
        case .auto:
            do {
                if let fromEnvironment = try EnvironmentReachability(environment: environment) { return fromEnvironment }
                // One reading of the kernel and the system bus (no listener: a run of the command
                // needs one), the same as `imgpolicy network` shows.
                return FixedReachability(NetworkDetector().detectWithServices().state)
            } catch {
                throw CommandFailure.usage(error.description)
            }
        case .state(let state):
            return FixedReachability(state)
        }
    }

    /// One line: the id and URL come from the item file, the rule and reason from the policy file.
    private func textLine(_ decision: Decision, item: ImageItem) -> String {
        TerminalText.escaped((item.id.map { "\($0): " } ?? "") + decision.description)
    }

    private func jsonLine(_ decision: Decision) -> String {
        JSONWriter.compactText(of: JSONValue(.object(decision.jsonMembers)))
    }

    private func explanation(policy: ImagePolicy, input: PolicyInput, item: ImageItem) -> String {
        var settingsText = ""
        for (position, declaration) in policy.settings.enumerated() {
            settingsText += " \(declaration.key)=\(input.settings.isOn(at: position) ? "on" : "off")"
        }
        var text = TerminalText.escaped("\(item.id.map { "\($0): " } ?? "")policy \(policy.name), \(input)\(settingsText)") + "\n"
        for trace in policy.explain(input) {
            let verdict = trace.mismatch.map { "no: \($0)" } ?? "yes: \(trace.rule.action)"
            text += "  " + TerminalText.escaped("rule \(trace.index + 1) \(trace.rule.name) [\(trace.rule.condition.summary)] \(verdict)") + "\n"
        }
        return text
    }
}
