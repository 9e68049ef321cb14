import Foundation
import Policy

/// A fresh folder under the system's temporary directory for a simulation's disk cache, never
/// the user's; `remove()` deletes it with its contents.
struct TemporaryCacheFolder {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/imgpolicy-simulate-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw CommandFailure("cannot make a temporary folder for the simulation's cache in \(NSTemporaryDirectory()): \(errnoText(errno))", status: .ioError)
        }
        path = String(cString: made)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
