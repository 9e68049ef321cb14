import ArgumentParser
import Policy

/// The options of `imgpolicy [decide]`, each declared once, here: its name, what it takes, its
/// help, and what its value does to `DecisionOptions` (the table: `row`).
///
/// Both ways of reading a command line derive from it. swift-argument-parser's `Decide` takes
/// each property wrapper's name, parsing and help from the table and hands what it parsed back
/// through `Decide.given(_:)`, an exhaustive switch: an option added here does not compile until
/// `Decide` has its property. `QuickDecide` (the fast path of a plain decision) reads the names
/// and forms from the table. Both apply each value through its row (`Row.apply`; `Decide` by
/// `options(_:)`), so a value lands in the same field, with the same checks and defaults,
/// whichever path read it; and
/// `DecideOptionTableTests` runs every option through both paths and compares what they read and
/// what the command prints.
///
/// To add an option: a case here, its row in `row`, its field in `DecisionOptions`, its
/// property in `Decide` (the compiler asks for it), a sample in `DecideOptionTableTests`.
enum DecideOption: Int, CaseIterable, Sendable {
    case item, network, expensive, constrained, roaming, captive, throughput, policy, settings, overrides, cached, json, explain
    case fetch, cacheFolder, output, size, verbose

    /// One row of the table: the option's declaration, and what a value given to it does.
    struct Row: Sendable {
        /// Name, form and help.
        let declaration: OptionDeclaration
        /// What it does to the options.
        let effect: Effect

        /// Applies what was given for this option to `options` (a value not given takes the
        /// declared default).
        ///
        /// - Throws: what the row refuses (a `--network` that is no network state).
        func apply(_ given: Given, to options: inout DecisionOptions) throws(ValidationError) {
            switch (effect, given) {
            case (.flag(let set), .flag(let isOn)):
                if isOn { set(&options) }
            case (.count(let set), .count(let count)):
                set(&options, count)
            case (.value(let set), .value(let text)):
                if let text = text ?? declaration.defaultValue { try set(&options, text) }
            case (.value(let set), .values(let texts)):
                for text in texts { try set(&options, text) }
            default:
                preconditionFailure("--\(declaration.name): given a value of another form than its row declares")
            }
        }
    }

    /// What an option given on the command line does to `DecisionOptions`.
    enum Effect: Sendable {
        /// A flag given: sets its field.
        case flag(@Sendable (inout DecisionOptions) -> Void)
        /// A counted flag: sets its field to the count.
        case count(@Sendable (inout DecisionOptions, Int) -> Void)
        /// A value (each value of a repeatable option, in order): checks it and sets or adds it;
        /// throws what a user typed wrong, in the words swift-argument-parser reports.
        case value(@Sendable (inout DecisionOptions, String) throws(ValidationError) -> Void)
    }

    /// What the command line gave for one option, as either path read it.
    enum Given: Sendable {
        /// A flag: given or not.
        case flag(Bool)
        /// A counted flag: how many times.
        case count(Int)
        /// An option with one value; nil when not given (its declared default applies).
        case value(String?)
        /// A repeatable option's values, in order.
        case values([String])
    }

    /// This option's row of the table; the rows are in the order of the help. (Made when asked,
    /// not kept in an array: a plain decision's start makes no array of rows nor a lazy global.)
    var row: Row {
        switch self {
        case .item:
            Row(declaration: .value("item", valueName: "file", required: true,
                                    help: "The item file: one item object or an array of them; - reads standard input."),
                effect: .value { options, text in options.item = text })
        case .network:
            Row(declaration: .value("network", valueName: "wifi|cellular|wired|offline|unknown|auto", default: "auto",
                                    help: "The network state as IMGPOLICY_NETWORK writes it (a kind, optionally followed by ,expensive ,constrained ,roaming ,captive; any case), or auto to detect it."),
                effect: .value { options, text throws(ValidationError) in
                    guard let choice = NetworkChoice(parsing: text) else { throw ValidationError(NetworkChoice.invalidMessage(text)) }
                    options.network = choice
                })
        case .expensive:
            Row(declaration: .flag("expensive", help: "The network is metered (hotspot, tethering)."),
                effect: .flag { $0.expensive = true })
        case .constrained:
            Row(declaration: .flag("constrained", help: "The user asked to save data (Low Data Mode, Data Saver)."),
                effect: .flag { $0.constrained = true })
        case .roaming:
            Row(declaration: .flag("roaming", help: "The modem is roaming (implies --expensive)."),
                effect: .flag { $0.roaming = true })
        case .captive:
            Row(declaration: .flag("captive", help: "The link is behind a captive portal or has no internet (a policy that does not test it sees offline)."),
                effect: .flag { $0.captive = true })
        case .throughput:
            // Checked when the run starts (`DecisionOptions.estimate()`): `--throughput -5` is a
            // bad number, not a missing one.
            Row(declaration: .value("throughput", valueName: "bytes-per-second", takesDashedValue: true,
                                    help: "The measured throughput of the link, in bytes per second (a policy testing \"slow\" compares it with its slowBelow)."),
                effect: .value { options, text in options.throughput = text })
        case .policy:
            Row(declaration: .value("policy", valueName: "name|file", default: "default", help: "A bundled policy's name or a policy file."),
                effect: .value { options, text in options.policy = text })
        case .settings:
            Row(declaration: SettingsLocation.declaration, effect: .value { options, text in options.settingsPath = text })
        case .overrides:
            // Checked against the policy when the run starts (`SettingOverride(parsing:in:)`).
            Row(declaration: .value("set", valueName: "key=value", repeatable: true,
                                    help: "Override a setting for this run only; nothing is written."),
                effect: .value { options, text in options.overrides.append(text) })
        case .cached:
            Row(declaration: .value("cached", valueName: "original|thumbnail", repeatable: true,
                                    help: "Assume this variant of every item is cached (repeatable)."),
                effect: .value { options, text throws(ValidationError) in
                    guard let variant = Variant(rawValue: text) else { throw ValidationError("--cached \(text): expected original or thumbnail") }
                    options.cached.append(variant)
                })
        case .json:
            Row(declaration: .flag("json", help: "One JSON object per item, one per line: action, variant, url, rule, reason, network."),
                effect: .flag { $0.json = true })
        case .explain:
            Row(declaration: .flag("explain", help: "Print the rules tried and why each did or did not match (to standard error with --json)."),
                effect: .flag { $0.explain = true })
        case .fetch:
            Row(declaration: .flag("fetch", help: "Carry the decisions out: load each image from the caches or the network."),
                effect: .flag { $0.fetch = true })
        case .cacheFolder:
            Row(declaration: CacheLocation.declaration, effect: .value { options, text in options.cachePath = text })
        case .output:
            Row(declaration: .value("output", valueName: "file",
                                    help: "With --fetch and one item: write the image bytes to this file (a regular file is replaced atomically; a device or FIFO is written to); no image to write (the placeholder) is exit 69, the file left as it was."),
                effect: .value { options, text in options.output = text })
        case .size:
            Row(declaration: SizeOption.declaration,
                effect: .value { options, text throws(ValidationError) in
                    guard let box = SizeOption.Box(argument: text) else { throw ValidationError("--size \(text): expected WxH") }
                    options.size = box
                })
        case .verbose:
            Row(declaration: LoggingOptions.declaration, effect: .count { options, count in options.verbose = count })
        }
    }

    /// This option's name, form and help.
    var declaration: OptionDeclaration { row.declaration }

    /// The option named by `argument` in its long form (`--item`), or nil.
    init?(longName argument: String) {
        guard argument.hasPrefix("--") else { return nil }
        // By position, not `allCases`: no array made (the fast path's start, docs/startup.md).
        var position = 0
        while let option = DecideOption(rawValue: position) {
            if option.declaration.isLongForm(argument) {
                self = option
                return
            }
            position += 1
        }
        return nil
    }

    /// What an option that is not on the command line gives: off, zero, no value.
    var absent: Given {
        switch declaration.form {
        case .flag: .flag(false)
        case .counted: .count(0)
        case .value: .value(nil)
        case .repeatedValue: .values([])
        }
    }

    /// The options `given` says, each row applied in the table's order (a value not given takes
    /// the declared default).
    ///
    /// - Throws: the first value that a row refuses (a `--network` that is no network state).
    static func options(_ given: (DecideOption) -> Given) throws(ValidationError) -> DecisionOptions {
        var options = DecisionOptions()
        for option in allCases {
            try option.row.apply(given(option), to: &options)
        }
        return options
    }
}

/// The table's declarations as swift-argument-parser's property wrappers of `Decide` read them.
extension DecideOption {
    /// `OptionDeclaration.argumentName` of this option.
    var argumentName: NameSpecification { declaration.argumentName }
    /// `OptionDeclaration.argumentHelp` of this option.
    var argumentHelp: ArgumentHelp { declaration.argumentHelp }
    /// `OptionDeclaration.valueParsing` of this option.
    var valueParsing: SingleValueParsingStrategy { declaration.valueParsing }
    /// The declared default value (empty when there is none).
    var defaultValue: String { declaration.defaultValue ?? "" }
}
