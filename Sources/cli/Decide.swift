import ArgumentParser
import Fetch
import Foundation
import Policy
#if canImport(LinuxNetwork)
import LinuxNetwork
#endif

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

    @Option(help: ArgumentHelp("The network kind, or auto to detect it.", valueName: "wifi|cellular|wired|offline|unknown|auto"))
    var network: NetworkChoice = .auto

    @Flag(help: "The network is metered (hotspot, tethering).")
    var expensive = false

    @Flag(help: "The user asked to save data (Low Data Mode, Data Saver).")
    var constrained = false

    @Flag(help: "The modem is roaming (implies --expensive).")
    var roaming = false

    @Flag(help: "The link is behind a captive portal or has no internet (a policy that does not test it sees offline).")
    var captive = false

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

    @Option(help: ArgumentHelp("With --fetch and one item: write the image bytes to this file.", valueName: "file"))
    var output: String?

    func validate() throws {
        if output != nil && !fetch { throw ValidationError("--output needs --fetch") }
    }

    func run() async throws {
        let policy = try PolicyLocator.load(policy)
        let overrides = try parseOverrides(for: policy)
        let state = try networkState()
        let items = try reporting { try ImageItem.load(contentsOf: item) }
        let store = settings.store()
        var resolved = try reporting { try policy.resolveSettings(from: store) }
        for (position, value) in overrides {
            if value { resolved.bits |= 1 << position } else { resolved.bits &= ~(1 << position) }
        }
        if output != nil && items.count != 1 {
            throw CommandFailure.usage("--output writes one image, but \(item) holds \(items.count) items")
        }
        // The fetch carries decisions out through the pipeline; decisions consult the real caches
        // (the pipeline's, else the disk cache's index), unless --cached says what to assume.
        var pipeline: ImagePipeline?
        var transport: CurlTransport?
        if fetch {
            transport = CurlTransport()
            pipeline = ImagePipeline(downloader: transport!, disk: try cache.open())
        }
        defer { transport?.shutdown() }
        let knownCache: any CacheInspecting
        if !cached.isEmpty {
            knownCache = StaticCacheContents(assuming: cached.reduce(into: CachedVariants()) { $0.insert(CachedVariants($1)) })
        } else if let pipeline {
            knownCache = pipeline
        } else {
            knownCache = try cache.openIfPresent() ?? StaticCacheContents.empty
        }
        var decisions: [Decision] = []
        var output = ""
        for item in items {
            let cachedVariants = knownCache.cachedVariants(of: item)
            let decision = policy.decide(item, network: state, settings: resolved, cached: cachedVariants)
            decisions.append(decision)
            if explain {
                let input = PolicyInput(network: state, cached: cachedVariants, hasThumbnail: item.thumbnail != nil, settings: resolved)
                let trace = explanation(policy: policy, input: input, item: item)
                if json { FileHandle.standardError.write(Data(trace.utf8)) } else { output += trace }
            }
            if !fetch { output += (json ? jsonLine(decision) : textLine(decision, item: item)) + "\n" }
        }
        if let pipeline {
            let results = await FetchRun(pipeline: pipeline, json: json).run(items: items, decisions: decisions)
            await pipeline.flush()
            output += results.lines.joined()
            FileHandle.standardOutput.write(Data(output.utf8))
            if let path = self.output {
                if let image = results.images.first ?? nil {
                    try writeAtomically(image.bytes, to: path)
                } else if results.failure == nil {
                    FileHandle.standardError.write(Data("imgpolicy: nothing written to \(path): the decision is the placeholder\n".utf8))
                }
            }
            if let failure = results.failure { throw failure }
            return
        }
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    /// Writes `bytes` to `path` through a temporary file and a rename: never half a file.
    private func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
            throw CommandFailure("\(path): cannot write the image (\(String(cString: strerror(errno)).lowercased()))", status: .ioError)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno)).lowercased()
            unlink(temporary)
            throw CommandFailure("\(path): cannot write the image (\(reason))", status: .ioError)
        }
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

    private func networkState() throws -> NetworkState {
        var state: NetworkState
        switch network {
        case .auto:
            do {
                if let fromEnvironment = try EnvironmentReachability(environment: ProcessInfo.processInfo.environment) {
                    state = fromEnvironment.currentState
                } else {
                    state = NetworkDetector().detect().state
                }
            } catch {
                throw CommandFailure.usage(error.description)
            }
        default:
            state = NetworkState(NetworkKind(rawValue: network.rawValue) ?? .unknown)
        }
        if expensive { state.isExpensive = true }
        if constrained { state.isConstrained = true }
        if roaming { state.isRoaming = true; state.isExpensive = true }
        if captive { state.isCaptive = true }
        return state
    }

    private func textLine(_ decision: Decision, item: ImageItem) -> String {
        (item.id.map { "\($0): " } ?? "") + decision.description
    }

    private func jsonLine(_ decision: Decision) -> String {
        JSONWriter.compactText(of: JSONValue(.object(decision.jsonMembers)))
    }

    private func explanation(policy: ImagePolicy, input: PolicyInput, item: ImageItem) -> String {
        var settingsText = ""
        for (position, declaration) in policy.settings.enumerated() {
            settingsText += " \(declaration.key)=\(input.settings.isOn(at: position) ? "on" : "off")"
        }
        var text = "\(item.id.map { "\($0): " } ?? "")policy \(policy.name), \(input)\(settingsText)\n"
        for trace in policy.explain(input) {
            let verdict = trace.mismatch.map { "no: \($0)" } ?? "yes: \(trace.rule.action)"
            text += "  rule \(trace.index + 1) \(trace.rule.name) [\(trace.rule.condition.summary)] \(verdict)\n"
        }
        return text
    }
}
