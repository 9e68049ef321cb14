import Foundation

/// A folder under the system's temporary directory, removed when the value is released.
///
/// Whatever a test still writes into it must have landed by then (flush the pipeline or cache
/// that writes there, stop the process): a write racing the removal leaves the folder behind,
/// and the removal says so on standard error, naming the folder.
public final class TemporaryFolder: @unchecked Sendable {
    // Immutable after init; the folder itself is only touched by the test that owns it.
    /// The folder's absolute path.
    public let path: String

    /// Creates a fresh, empty folder.
    public init() {
        var template = Array((NSTemporaryDirectory() + "/imgpolicy-test-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch where FileManager.default.fileExists(atPath: path) {
            FileHandle.standardError.write(Data("TemporaryFolder: \(path) is left behind (something still wrote into it): \(error)\n".utf8))
        } catch {
            // Removed already, by the test itself.
        }
    }

    /// The absolute path of `name` inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` (creating folders) and returns its path.
    @discardableResult
    public func write(_ text: String, to name: String) throws -> String {
        try write(Data(text.utf8), to: name)
    }

    /// Writes `data` to `name` (creating folders) and returns its path.
    @discardableResult
    public func write(_ data: Data, to name: String) throws -> String {
        let target = file(name)
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Creates a symbolic link `name` → `destination`.
    public func link(_ name: String, to destination: String) throws {
        let target = file(name)
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: destination)
    }

    /// The text of `name`.
    public func read(_ name: String) throws -> String {
        try String(contentsOfFile: file(name), encoding: .utf8)
    }

    /// The names in the folder (or a subfolder), sorted.
    public func list(_ subfolder: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: subfolder.isEmpty ? path : file(subfolder)).sorted()
    }
}
