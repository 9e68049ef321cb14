import Foundation

/// Paths inside this package and its build, for tests.
public enum PackagePaths {
    /// The package's root folder (where Package.swift is).
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The bundled policies folder.
    public static var policies: String { root + "/policies" }

    /// The folder holding the built products: the one of the running test binary.
    public static let products: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe)
        // On Linux the test binary is `<products>/<name>.xctest`; on macOS it sits deeper in a bundle.
        while url.pathComponents.count > 1, !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path + "/imgpolicy") {
            url.deleteLastPathComponent()
        }
        return url.deletingLastPathComponent().path
    }()

    /// The built `imgpolicy` executable.
    public static var executable: String { products + "/imgpolicy" }
}
