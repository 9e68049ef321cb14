#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Support

/// Standard output written in blocks of about 64 KiB as a run's lines come, and `loading n/total`
/// on standard error (a terminal) meanwhile, cleared before each block so that the two never mix.
/// Used by one task at a time (`FetchRun.run`): no lock.
final class StreamedOutput {
    private var buffer = ""
    private var done = 0
    private let total: Int?

    /// Shows progress out of `progressTotal` items (nil: none).
    init(progressTotal: Int?) {
        total = progressTotal
        buffer.reserveCapacity(Self.blockSize)
    }

    private static let blockSize = 64 << 10

    /// One more item loaded.
    func loaded() {
        done += 1
        if let total { FileHandle.standardError.write(Data("\rloading \(done)/\(total)".utf8)) }
    }

    /// Adds `text` to standard output (written when a block is full).
    func write(_ text: String) {
        buffer += text
        if buffer.utf8.count >= Self.blockSize { flush() }
    }

    /// Writes a line to standard error at once, after what standard output holds so far.
    func writeError(_ text: String) {
        flush()
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Writes what is held.
    func flush() {
        guard !buffer.isEmpty else { return }
        if total != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        FileHandle.standardOutput.write(text: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Clears the progress line.
    func endProgress() {
        if total != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
