import Policy
import Support

/// The fast path of the plain decision (docs/startup.md): reads the command line of the common
/// `imgpolicy [decide] --item FILE [--network KIND] [flags…]` without swift-argument-parser, which
/// builds the arguments of the whole command tree by reflection (about 4.5 ms of a 9 ms start).
///
/// It recognises only what it is sure of: each option as `--name value` (a value is `-` or does
/// not start with `-`), each flag at most once (`--set` and `--cached` may repeat), choices it can
/// check (`--network`, `--cached`, `--size`), and `Decide.validate()` passing. Anything else
/// (`--help`, `--version`, a subcommand, `--name=value`, `-v`, a repeated option, an unknown or
/// misspelt argument, a missing value, a bad choice) gives nil, and the command is parsed by
/// swift-argument-parser as before, so that every message and exit status stays its own. Both
/// paths run the same `DecisionOptions` (`Decide.options`): this one without making a `Decide`,
/// whose property wrappers cost swift-argument-parser's generic metadata at run time.
///
/// ```swift
/// if let options = QuickDecide.options(from: Array(CommandLine.arguments.dropFirst())), !options.fetch {
///     try options.decideWithoutFetching()
/// }
/// ```
enum QuickDecide {
    /// The options of the `decide` command `arguments` (without the program's name) ask for, or
    /// nil when swift-argument-parser must read them.
    static func options(from arguments: [String]) -> DecisionOptions? {
        var remaining = arguments[...]
        if remaining.first == "decide" { remaining = remaining.dropFirst() }
        // Plain variables and a switch, not sets or dictionaries of names: each generic type
        // made at run time costs a search of the binary's protocol conformances.
        var item: String?, network: String?, throughput: String?, policy: String?, settingsPath: String?
        var cacheFolder: String?, output: String?, size: String?
        var expensive = false, constrained = false, roaming = false, captive = false
        var json = false, explain = false, fetch = false
        var overrides: [String] = [], cached: [String] = []
        /// Sets `flag` once; false if it was set already.
        func once(_ flag: inout Bool) -> Bool {
            defer { flag = true }
            return !flag
        }
        /// Takes the next argument as the value of an option given once; false if there is no
        /// value, it looks like an option, or the option was given already.
        func value(_ slot: inout String?) -> Bool {
            guard slot == nil, let next = remaining.popFirst(), next == "-" || !next.hasPrefix("-") else { return false }
            slot = next
            return true
        }
        while let name = remaining.popFirst() {
            let understood: Bool
            switch name {
            case "--item": understood = value(&item)
            case "--network": understood = value(&network)
            case "--throughput": understood = value(&throughput)
            case "--policy": understood = value(&policy)
            case "--settings": understood = value(&settingsPath)
            case "--cache-dir": understood = value(&cacheFolder)
            case "--output": understood = value(&output)
            case "--size": understood = value(&size)
            case "--set", "--cached":
                var repeated: String?
                understood = value(&repeated)
                if let repeated {
                    if name == "--set" { overrides.append(repeated) } else { cached.append(repeated) }
                }
            case "--expensive": understood = once(&expensive)
            case "--constrained": understood = once(&constrained)
            case "--roaming": understood = once(&roaming)
            case "--captive": understood = once(&captive)
            case "--json": understood = once(&json)
            case "--explain": understood = once(&explain)
            case "--fetch": understood = once(&fetch)
            default: understood = false
            }
            guard understood else { return nil }
        }
        guard let item else { return nil }
        var options = DecisionOptions(item: item)
        if let network {
            guard let choice = NetworkChoice(parsing: network) else { return nil }
            options.network = choice
        }
        options.expensive = expensive
        options.constrained = constrained
        options.roaming = roaming
        options.captive = captive
        options.json = json
        options.explain = explain
        options.fetch = fetch
        options.throughput = throughput
        options.policy = policy ?? "default"
        options.settingsPath = settingsPath
        options.overrides = overrides
        for text in cached {
            guard let variant = Variant(rawValue: text) else { return nil }
            options.cached.append(variant)
        }
        options.cachePath = cacheFolder
        options.output = output
        if let size {
            guard let box = SizeOption.Box(argument: size) else { return nil }
            options.size = box
        }
        // A validation failure is reported by swift-argument-parser, with its own words.
        guard (try? options.validate()) != nil else { return nil }
        return options
    }
}
