import ArgumentParser

/// How one command-line option is written and described, declared once: swift-argument-parser's
/// property wrapper takes its name, parsing and help from it (`argumentName`, `valueParsing`,
/// `argumentHelp`), and `QuickDecide` its name and form.
///
/// An option shared by several commands (`--settings`, `--cache-dir`, `--size`, `--verbose`)
/// is declared by its option group; a command's own options by the command's table
/// (`DecideOption`).
struct OptionDeclaration: Sendable {
    /// What the option takes on the command line.
    enum Form: Sendable, Equatable {
        /// `--name`, on or off.
        case flag
        /// `--name`, `-n`, counted each time it is given (`-vv`).
        case counted
        /// `--name VALUE`.
        case value
        /// `--name VALUE`, repeatable: every value is kept, in order.
        case repeatedValue
    }

    /// The long name, without its dashes (`item` for `--item`).
    let name: String
    /// The one-letter name, without its dash (`v` for `-v`), if any.
    let short: Character?
    /// What it takes.
    let form: Form
    /// What the value is called in the help (`file` in `--item <file>`); nil for flags.
    let valueName: String?
    /// The help text, one sentence or two.
    let help: String
    /// The value when the option is not given, shown in the help as `(default: …)`; nil when none.
    let defaultValue: String?
    /// Whether the command refuses to run without it.
    let isRequired: Bool
    /// Whether a value that starts with `-` is taken as the value (`--throughput -5` is a bad
    /// number, not a missing one: swift-argument-parser's `.unconditional`).
    let takesDashedValue: Bool

    /// A flag: `--name`.
    static func flag(_ name: String, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, short: nil, form: .flag, valueName: nil, help: help, defaultValue: nil, isRequired: false,
                          takesDashedValue: false)
    }

    /// A flag counted each time it is given: `--name` or `-short`.
    static func counted(_ name: String, short: Character, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, short: short, form: .counted, valueName: nil, help: help, defaultValue: nil, isRequired: false,
                          takesDashedValue: false)
    }

    /// An option with a value: `--name VALUE`, `repeatable` or given at most once.
    static func value(_ name: String, valueName: String, default defaultValue: String? = nil, required isRequired: Bool = false,
                      repeatable: Bool = false, takesDashedValue: Bool = false, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, short: nil, form: repeatable ? .repeatedValue : .value, valueName: valueName, help: help,
                          defaultValue: defaultValue, isRequired: isRequired, takesDashedValue: takesDashedValue)
    }

    /// The names for swift-argument-parser's property wrapper: `--name`, and `-short` when it has one.
    var argumentName: NameSpecification {
        guard let short else { return [.customLong(name)] }
        return [.customLong(name), .customShort(short)]
    }

    /// The help for swift-argument-parser's property wrapper.
    var argumentHelp: ArgumentHelp {
        ArgumentHelp(help, valueName: valueName)
    }

    /// How swift-argument-parser reads the value (`takesDashedValue`).
    var valueParsing: SingleValueParsingStrategy {
        takesDashedValue ? .unconditional : .next
    }
}
