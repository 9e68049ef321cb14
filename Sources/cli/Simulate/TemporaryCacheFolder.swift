#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Policy

/// A fresh folder under the system's temporary directory for a simulation's disk cache, never
/// the user's; `remove()` deletes it with its contents.
struct TemporaryCacheFolder {
    let path: String

    init() throws {
        let base = Self.systemTemporaryFolder
        var template = Array((base + "/imgpolicy-simulate-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw CommandFailure("cannot make a temporary folder for the simulation's cache in \(base): \(errnoText(errno))", status: .ioError)
        }
        path = String(cString: made)
    }

    /// `$TMPDIR` when it is an absolute path, else `/tmp`.
    static var systemTemporaryFolder: String {
        if let value = getenv("TMPDIR").map({ String(cString: $0) }), value.hasPrefix("/") {
            return value.count > 1 && value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        return "/tmp"
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
