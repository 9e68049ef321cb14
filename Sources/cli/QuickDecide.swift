import Policy
import Support

/// The fast path of the plain decision (docs/startup.md): reads the command line of the common
/// `imgpolicy [decide] --item FILE [--network KIND] [flags…]` without swift-argument-parser, which
/// builds the arguments of the whole command tree by reflection (about 4.5 ms of a 9 ms start).
///
/// The options, their names and forms come from `DecideOption`'s table, as `Decide`'s do, and the
/// values become `DecisionOptions` through the same `DecideOption.options(_:)`: an option added
/// to the table works here too. It recognises only what it is sure of: each option as
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
        // What was given, by the option's position in the table: an array and a switch, no sets or
        // dictionaries of names (each generic type made at run time costs a search of the
        // binary's protocol conformances).
        var given = [DecideOption.Given?](repeating: nil, count: DecideOption.allCases.count)
        while let argument = remaining.popFirst() {
            guard let option = DecideOption(longName: argument) else { return nil }
            let slot = option.rawValue
            switch option.declaration.form {
            case .flag:
                guard given[slot] == nil else { return nil }
                given[slot] = .flag(true)
            case .counted:
                // `-v`, `-vv`, `--verbose`: left to swift-argument-parser (short flags may be grouped).
                return nil
            case .value:
                guard given[slot] == nil, let value = nextValue(&remaining) else { return nil }
                given[slot] = .value(value)
            case .repeatedValue:
                guard let value = nextValue(&remaining) else { return nil }
                if case .values(let earlier)? = given[slot] {
                    given[slot] = .values(earlier + [value])
                } else {
                    given[slot] = .values([value])
                }
            }
        }
        for option in DecideOption.allCases where option.declaration.isRequired && given[option.rawValue] == nil {
            return nil
        }
        // A value a row refuses, or a validation failure, is reported by swift-argument-parser,
        // with its own words.
        guard let options = try? DecideOption.options({ given[$0.rawValue] ?? $0.absent }),
              (try? options.validate()) != nil else { return nil }
        return options
    }

    /// Takes the next argument as an option's value: nil if there is none or it looks like an option.
    private static func nextValue(_ remaining: inout ArraySlice<String>) -> String? {
        guard let next = remaining.popFirst(), next == "-" || !next.hasPrefix("-") else { return nil }
        return next
    }
}
