// The command imports FoundationEssentials, not Foundation, where it can (Linux), so that a
// decision does not load Foundation, FoundationInternationalization and ICU (docs/startup.md).
// What the command uses from Foundation that FoundationEssentials lacks is here: Foundation's
// `FileHandle.standardOutput/standardError.write(_:)`, under the same names so that the command's
// files read the same on every platform (on Apple platforms, without FoundationEssentials,
// Foundation's own is used), and `exitProcess`. Paths as text are in `PathText`.
import Support
#if canImport(FoundationEssentials)
import FoundationEssentials

/// Standard output and standard error, as far as the command writes to them: whole `Data`
/// blocks, written with `write(2)` until done (a short write or `EINTR` goes on; any other
/// failure, such as a closed pipe, drops the rest, which Foundation's `FileHandle.write` does
/// not report either).
///
/// ```swift
/// FileHandle.standardError.write(Data("imgpolicy: …\n".utf8))
/// ```
struct FileHandle: Sendable {
    /// The descriptor written to.
    let fileDescriptor: Int32

    /// Descriptor 1.
    static let standardOutput = FileHandle(fileDescriptor: 1)
    /// Descriptor 2.
    static let standardError = FileHandle(fileDescriptor: 2)

    /// Writes all of `data`.
    func write(_ data: Data) {
        data.withUnsafeBytes { write(bytes: $0) }
    }

    /// Writes `text` as UTF-8, without making a `Data` of it first (`Data(text.utf8)` asks at run
    /// time whether the view is `ContiguousBytes`, a search of the executable's conformances on
    /// first use: docs/startup.md).
    func write(text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes all of `buffer`; on standard error, a path made from an argument that is not UTF-8
    /// is shown as the user wrote it (`ArgumentPaths.shown(_:)`).
    private func write(bytes buffer: UnsafeRawBufferPointer) {
        if fileDescriptor == 2 && ArgumentPaths.hasSubstitutes {
            var shown = ArgumentPaths.shown(String(decoding: buffer, as: UTF8.self))
            return shown.withUTF8 { writeAll(UnsafeRawBufferPointer($0)) }
        }
        writeAll(buffer)
    }

    private func writeAll(_ buffer: UnsafeRawBufferPointer) {
        guard var start = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let written = writeSome(start, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                if fileDescriptor == 1 { StandardStreams.outputFailed(errno) }
                return
            }
            start += written
            remaining -= written
        }
    }

    private func writeSome(_ start: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fileDescriptor, start, count)
        #else
        Musl.write(fileDescriptor, start, count)
        #endif
    }
}
#else
import Foundation

extension FileHandle {
    /// Writes `text` as UTF-8 (FoundationEssentials' stand-in above has the same method).
    func write(text: String) { write(Data(text.utf8)) }
}
#endif

/// Ends the process with `status` (C's `exit`), standard output flushed first: a run that would
/// succeed but whose output was lost (`> /dev/full`, a closed descriptor) says so on one line and
/// exits 74 instead (`StandardStreams.finish()`). Named apart, since a bare `exit(status)` inside
/// a command or `CommandFailure` finds their own `exit` members.
func exitProcess(_ status: Int32) -> Never {
    if let lost = StandardStreams.finish(), status == 0 {
        let line = Array("imgpolicy: standard output: \(lost)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(ExitStatus.ioError.rawValue)
    }
    exit(status)
}
