import ArgumentParser
import Policy

/// `imgpolicy [decide]`: the decision for each item of an item file.
///
/// Its options are declared in `DecideOption`'s table: each property wrapper here takes its name,
/// parsing and help from its row, and `given(_:)` hands what swift-argument-parser parsed back
/// to the table, which makes the `DecisionOptions` the run reads (as `QuickDecide` does for the
/// fast path).
struct Decide: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decide what to show for each item (the default command).",
        discussion: """
            Network precedence: --network, then $IMGPOLICY_NETWORK (e.g. "cellular,expensive"), then \
            detection. An image counts as cached when the disk cache holds it, or, instead, when \
            --cached says so. --fetch carries the decisions out (offline, nothing touches the network).
            """
    )

    @Option(name: DecideOption.item.argumentName, help: DecideOption.item.argumentHelp)
    var item: String

    @Option(name: DecideOption.network.argumentName, help: DecideOption.network.argumentHelp)
    var network = DecideOption.network.defaultValue

    @Flag(name: DecideOption.expensive.argumentName, help: DecideOption.expensive.argumentHelp)
    var expensive = false

    @Flag(name: DecideOption.constrained.argumentName, help: DecideOption.constrained.argumentHelp)
    var constrained = false

    @Flag(name: DecideOption.roaming.argumentName, help: DecideOption.roaming.argumentHelp)
    var roaming = false

    @Flag(name: DecideOption.captive.argumentName, help: DecideOption.captive.argumentHelp)
    var captive = false

    @Option(name: DecideOption.throughput.argumentName, parsing: DecideOption.throughput.valueParsing,
            help: DecideOption.throughput.argumentHelp)
    var throughput: String?

    @Option(name: DecideOption.policy.argumentName, help: DecideOption.policy.argumentHelp)
    var policy = DecideOption.policy.defaultValue

    @OptionGroup var settings: SettingsLocation

    @Option(name: DecideOption.overrides.argumentName, help: DecideOption.overrides.argumentHelp)
    var overrides: [String] = []

    @Option(name: DecideOption.cached.argumentName, help: DecideOption.cached.argumentHelp)
    var cached: [Variant] = []

    @Flag(name: DecideOption.json.argumentName, help: DecideOption.json.argumentHelp)
    var json = false

    @Flag(name: DecideOption.explain.argumentName, help: DecideOption.explain.argumentHelp)
    var explain = false

    @Flag(name: DecideOption.fetch.argumentName, help: DecideOption.fetch.argumentHelp)
    var fetch = false

    @OptionGroup var cache: CacheLocation

    @Option(name: DecideOption.output.argumentName, help: DecideOption.output.argumentHelp)
    var output: String?

    @OptionGroup var sizing: SizeOption

    @OptionGroup var logging: LoggingOptions

    /// What swift-argument-parser parsed for `option`, as the table reads it. Exhaustive: an
    /// option added to the table does not compile until it has its property here.
    func given(_ option: DecideOption) -> DecideOption.Given {
        switch option {
        case .item: .value(item)
        case .network: .value(network)
        case .expensive: .flag(expensive)
        case .constrained: .flag(constrained)
        case .roaming: .flag(roaming)
        case .captive: .flag(captive)
        case .throughput: .value(throughput)
        case .policy: .value(policy)
        case .settings: .value(settings.path)
        case .overrides: .values(overrides)
        case .cached: .values(cached.map(\.rawValue))
        case .json: .flag(json)
        case .explain: .flag(explain)
        case .fetch: .flag(fetch)
        case .cacheFolder: .value(cache.path)
        case .output: .value(output)
        case .size: .value(sizing.size?.argument)
        case .verbose: .count(logging.verbose)
        }
    }

    /// The options as plain values, which the run reads: made by the table from what was parsed.
    func options() throws(ValidationError) -> DecisionOptions {
        try DecideOption.options(given)
    }

    func validate() throws {
        try options().validate()
    }

    func run() async throws {
        try await options().run()
    }
}
