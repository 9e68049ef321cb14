import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy
import Support

/// `imgpolicy settings list|get|set|unset`: the user's settings file.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Read and change the settings file.",
        subcommands: [List.self, Get.self, Set.self, Unset.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every stored setting, then the policy's defaults for those not stored.")

        @OptionGroup var settings: SettingsLocation

        @Option(help: ArgumentHelp("Show the defaults of this policy for settings not stored.", valueName: "name|file"))
        var policy = "default"

        func run() throws {
            let policy = try PolicyLocator.load(policy)
            let stored = try reporting { try settings.store().storedValues() }
            // Keys and values come from the settings file, names from the policy file: one line each.
            for (key, value) in stored.sorted(by: { $0.key < $1.key }) {
                printLine(TerminalText.escaped("\(key) = \(value)"))
            }
            for declaration in policy.settings where stored[declaration.key] == nil {
                printLine(TerminalText.escaped("\(declaration.key) = \(declaration.defaultValue) (default of policy \(policy.name))"))
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One setting's value; exit 1 when it is neither stored nor declared by the policy.")

        @Argument(help: "The key.") var key: String
        @OptionGroup var settings: SettingsLocation
        @Option(help: ArgumentHelp("Fall back to this policy's default for the key.", valueName: "name|file"))
        var policy = "default"

        func run() throws {
            if let value = try reporting({ try settings.store().storedValue(forKey: key) }) {
                printLine(TerminalText.escaped(value.description))
                return
            }
            let policy = try PolicyLocator.load(policy)
            if let declaration = policy.settings.first(where: { $0.key == key }) {
                printLine("\(declaration.defaultValue)")
                return
            }
            throw CommandFailure("\(key) is not set", status: .notSet)
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a setting.",
            discussion: """
                A key the policy reads must get a boolean (true/false, yes/no, on/off, 1/0). Other keys \
                take true/false as a boolean, a number as a number, anything else as a string (--string \
                forces a string). The file is replaced atomically; other keys are kept.
                """)

        @Argument(help: "The key.") var key: String
        @Argument(help: "The value.") var value: String
        @Flag(help: "Store the value as a string, whatever it looks like.") var string = false
        @OptionGroup var settings: SettingsLocation
        @Option(help: ArgumentHelp("The policy whose settings are type-checked.", valueName: "name|file"))
        var policy = "default"

        func run() throws {
            guard !key.isEmpty else { throw CommandFailure.usage("the key is empty") }
            let policy = try PolicyLocator.load(policy)
            let parsed: SettingValue
            if policy.settingPosition(key) != nil {
                guard !string, let flag = SettingValue.parseBool(value) else {
                    throw CommandFailure.usage("\(key): \"\(value)\" is not a boolean, and the policy \"\(policy.name)\" reads \(key) as one (true/false, yes/no, on/off, 1/0)")
                }
                parsed = .bool(flag)
            } else {
                parsed = string ? .string(value) : SettingValue(parsing: value)
            }
            let store = try settings.store()
            if let refusal = ArgumentPaths.replacementRefusal(store.path, "cannot write the settings") { throw refusal }
            try reporting { try store.set(parsed, forKey: key) }
        }
    }

    struct Unset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a stored setting (the policy's default applies again).")

        @Argument(help: "The key.") var key: String
        @OptionGroup var settings: SettingsLocation

        func run() throws {
            let store = try settings.store()
            if let refusal = ArgumentPaths.replacementRefusal(store.path, "cannot write the settings") { throw refusal }
            try reporting { try store.removeValue(forKey: key) }
        }
    }
}
