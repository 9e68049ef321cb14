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

/// The options of `imgpolicy [decide]` as plain values, and the run that reads them: what
/// `Decide` parsed with swift-argument-parser, or what `QuickDecide` read itself (a plain
/// decision, without making swift-argument-parser's property wrappers). Both make it with
/// `DecideOption.options(_:)`, which sets each field from the option that declares it (and its
/// declared default): the values here are only where that starts.
struct DecisionOptions {
    var item = ""
    var network: NetworkChoice = .auto
    var expensive = false
    var constrained = false
    var roaming = false
    var captive = false
    var throughput: String?
    var policy = ""
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
        let overrides = try settingOverrides(for: policy)
        let provider = try networkProvider(environment: environment)
        let items = try reporting { try ImageItem.load(contentsOf: item) }
        logger.debug("items read", metadata: ["file": "\(item)", "count": "\(items.count)"])
        let store = try SettingsLocation.store(path: settingsPath)
        let stored = try reporting { try policy.resolveSettings(from: store) }
        let resolved: ResolvedSettings
        do throws(SettingOverrideError) {
            resolved = try stored.overriding(overrides, in: policy)
        } catch {
            // Not reached: every key was checked against this policy above.
            throw CommandFailure.usage("--set: \(error)")
        }
        if fetch && !cached.isEmpty {
            throw CommandFailure.usage("--cached cannot be combined with --fetch: --cached imagines what is cached, --fetch uses the real cache")
        }
        // Without --fetch, --size is the display width every decision uses (rungs, covering
        // thumbnails); with --fetch it also decodes the one image to fit.
        if (output != nil || (size != nil && fetch)) && items.count != 1 {
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
                let trace = explanation(policy: setup.policy, input: input, item: item, estimate: setup.estimate)
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

    /// `--set` values, each checked against the policy (in order: `key=value`, a key it reads, a
    /// boolean), before the items are read.
    private func settingOverrides(for policy: ImagePolicy) throws(CommandFailure) -> [SettingOverride] {
        var checked: [SettingOverride] = []
        for text in overrides {
            do throws(SettingOverrideError) {
                checked.append(try SettingOverride(parsing: text, in: policy))
            } catch {
                throw CommandFailure.usage("--set \(text): \(error)")
            }
        }
        return checked
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

    private func explanation(policy: ImagePolicy, input: PolicyInput, item: ImageItem, estimate: LinkEstimate?) -> String {
        var settingsText = ""
        for (position, declaration) in policy.settings.enumerated() {
            settingsText += " \(declaration.key)=\(input.settings.isOn(at: position) ? "on" : "off")"
        }
        // What rung rules read besides the input: the display width and the measured rate.
        var measures = ""
        if let width = size?.width { measures += " display=\(width)px" }
        if let estimate { measures += " throughput=\(Int(estimate.bytesPerSecond))B/s" }
        var text = TerminalText.escaped("\(item.id.map { "\($0): " } ?? "")policy \(policy.name), \(input)\(settingsText)\(measures)") + "\n"
        for trace in policy.explain(input) {
            let verdict = trace.mismatch.map { "no: \($0)" } ?? "yes: \(trace.rule.actionDescription)"
            text += "  " + TerminalText.escaped("rule \(trace.index + 1) \(trace.rule.name) [\(trace.rule.condition.summary)] \(verdict)") + "\n"
        }
        return text
    }
}
