import Policy
import Support

/// The fast path of the plain decision (docs/startup.md): reads the command line of the common
/// `imgpolicy [decide] --item FILE [--network KIND] [flags…]` without swift-argument-parser, which
/// builds the arguments of the whole command tree by reflection (about 4.5 ms of a 9 ms start).
///
/// The options, their names and forms come from `DecideOption`'s table, as `Decide`'s do, and
/// each value becomes part of `DecisionOptions` through the same row (`DecideOption.Row.apply`),
/// as it is read; the options not given then take the same defaults: an option added to the
/// table works here too. It recognises only what it is sure of: each option as
/// `--name value` (a value is `-` or does not start with `-`), each flag and single-value option
/// at most once (repeatable options may repeat), every value the table's row accepts
/// (`--network`, `--cached`, `--size` are checked there), the required `--item`, and
/// `DecisionOptions.validate()` passing. Anything else (`--help`, `--version`, a subcommand,
/// `--name=value`, a counted flag such as `-v` or `--verbose`, a repeated option, an unknown or
/// misspelt argument, a missing value, a bad choice) gives nil, and the command is parsed by
/// swift-argument-parser as before, so that every message and exit status stays its own. It
/// makes no `Decide`, whose property wrappers cost swift-argument-parser's generic metadata at
/// run time.
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
        // The options given so far, a bit per position in the table: no array, set or dictionary
        // (each generic type made at run time costs a lookup of its metadata, one with a
        // `Hashable` key a search of the binary's protocol conformances).
        var options = DecisionOptions()
        var seen: UInt64 = 0
        while let argument = remaining.popFirst() {
            guard let option = DecideOption(longName: argument) else { return nil }
            let row = option.row
            let bit: UInt64 = 1 << option.rawValue
            let given: DecideOption.Given
            switch row.declaration.form {
            case .flag:
                guard seen & bit == 0 else { return nil }
                given = .flag(true)
            case .counted:
                // `-v`, `-vv`, `--verbose`: left to swift-argument-parser (short flags may be grouped).
                return nil
            case .value:
                guard seen & bit == 0, let value = nextValue(&remaining) else { return nil }
                given = .value(value)
            case .repeatedValue:
                // Each value applied as it comes, as swift-argument-parser's list is, in order.
                guard let value = nextValue(&remaining) else { return nil }
                given = .value(value)
            }
            seen |= bit
            // A value a row refuses is reported by swift-argument-parser, with its own words.
            guard (try? row.apply(given, to: &options)) != nil else { return nil }
        }
        // The options not given: a required one missing is swift-argument-parser's to report;
        // the others take their defaults.
        var position = 0
        while let option = DecideOption(rawValue: position) {
            if seen & (1 << position) == 0 {
                let row = option.row
                guard !row.declaration.isRequired, (try? row.apply(option.absent, to: &options)) != nil else { return nil }
            }
            position += 1
        }
        // A validation failure too.
        guard (try? options.validate()) != nil else { return nil }
        return options
    }

    /// Takes the next argument as an option's value: nil if there is none or it looks like an option.
    private static func nextValue(_ remaining: inout ArraySlice<String>) -> String? {
        guard let next = remaining.popFirst(), next == "-" || !next.hasPrefix("-") else { return nil }
        return next
    }
}
