import Foundation
import Testing
import TestSupport

/// Runs the built `imgpolicy` with a private settings folder, so that no test reads or writes the
/// user's real settings.
struct CLIRunner {
    let home = TemporaryFolder()

    func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> ProcessResult {
        let executable = PackagePaths.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable),
                     "build the package first (swift build): \(executable) is missing")
        var env = ["XDG_CONFIG_HOME": home.file("config"), "HOME": home.path]
        env.merge(environment) { _, new in new }
        let result = try ProcessResult.run(executable, arguments, environment: env, stdin: stdin.map { Data($0.utf8) },
                                           workingDirectory: PackagePaths.root)
        #expect(!result.crashed, "imgpolicy crashed: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
        return result
    }

    /// The settings file this runner's commands use by default.
    var settingsPath: String { home.file("config/imgpolicy/settings.json") }
}
