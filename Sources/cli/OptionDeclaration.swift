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
    var name: String { nameText.description }
    /// The one-letter name, without its dash (`v` for `-v`), if any.
    let short: Unicode.Scalar?
    /// What it takes.
    let form: Form
    /// What the value is called in the help (`file` in `--item <file>`); nil for flags.
    var valueName: String? { valueNameText?.description }
    /// The help text, one sentence or two.
    var help: String { helpText.description }
    /// The value when the option is not given, shown in the help as `(default: …)`; nil when none.
    var defaultValue: String? { defaultValueText?.description }
    /// Whether the command refuses to run without it.
    let isRequired: Bool
    /// Whether a value that starts with `-` is taken as the value (`--throughput -5` is a bad
    /// number, not a missing one: swift-argument-parser's `.unconditional`).
    let takesDashedValue: Bool

    // The texts as static strings (and `short` a scalar): a declaration is plain bytes to copy, so that making the rows
    // of a table costs a plain decision's start no reference counting (docs/startup.md).
    private let nameText: StaticString
    private let valueNameText: StaticString?
    private let helpText: StaticString
    private let defaultValueText: StaticString?

    private init(name: StaticString, short: Unicode.Scalar?, form: Form, valueName: StaticString?, help: StaticString,
                 defaultValue: StaticString?, isRequired: Bool, takesDashedValue: Bool) {
        self.nameText = name
        self.short = short
        self.form = form
        self.valueNameText = valueName
        self.helpText = help
        self.defaultValueText = defaultValue
        self.isRequired = isRequired
        self.takesDashedValue = takesDashedValue
    }

    /// A flag: `--name`.
    static func flag(_ name: StaticString, help: StaticString) -> OptionDeclaration {
        OptionDeclaration(name: name, short: nil, form: .flag, valueName: nil, help: help, defaultValue: nil, isRequired: false,
                          takesDashedValue: false)
    }

    /// A flag counted each time it is given: `--name` or `-short`.
    static func counted(_ name: StaticString, short: Unicode.Scalar, help: StaticString) -> OptionDeclaration {
        OptionDeclaration(name: name, short: short, form: .counted, valueName: nil, help: help, defaultValue: nil, isRequired: false,
                          takesDashedValue: false)
    }

    /// An option with a value: `--name VALUE`, `repeatable` or given at most once.
    static func value(_ name: StaticString, valueName: StaticString, default defaultValue: StaticString? = nil,
                      required isRequired: Bool = false, repeatable: Bool = false, takesDashedValue: Bool = false,
                      help: StaticString) -> OptionDeclaration {
        OptionDeclaration(name: name, short: nil, form: repeatable ? .repeatedValue : .value, valueName: valueName, help: help,
                          defaultValue: defaultValue, isRequired: isRequired, takesDashedValue: takesDashedValue)
    }

    /// Whether `argument` is this option's long form, `--name` (compared byte for byte: no
    /// string made).
    func isLongForm(_ argument: String) -> Bool {
        guard argument.utf8.count == nameText.utf8CodeUnitCount + 2 else { return false }
        var argument = argument
        return argument.withUTF8 { bytes in
            nameText.withUTF8Buffer { name in
                bytes[0] == UInt8(ascii: "-") && bytes[1] == UInt8(ascii: "-")
                    && UnsafeBufferPointer(rebasing: bytes[2...]).elementsEqual(name)
            }
        }
    }

    /// The names for swift-argument-parser's property wrapper: `--name`, and `-short` when it has one.
    var argumentName: NameSpecification {
        guard let short else { return [.customLong(name)] }
        return [.customLong(name), .customShort(Character(short))]
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
