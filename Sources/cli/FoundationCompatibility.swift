// The command imports FoundationEssentials, not Foundation, where it can (Linux), so that a
// decision does not load FoundationInternationalization and ICU (about 30 MB, a third of the
// start-up time: docs/startup.md). The few things it uses from Foundation that FoundationEssentials
// lacks are written here, with Foundation's names, so that the command's files read the same on
// every platform. On Apple platforms (no FoundationEssentials module) Foundation's own are used.
#if canImport(FoundationEssentials)
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Standard output and standard error, as far as the command writes to them: whole `Data`
/// blocks, written with `write(2)` until done (a short write or `EINTR` goes on; any other
/// failure, such as a closed pipe, drops the rest, as Foundation's `FileHandle.write` cannot
/// report it either).
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
        data.withUnsafeBytes { buffer in
            guard var start = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = Glibc.write(fileDescriptor, start, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                start += written
                remaining -= written
            }
        }
    }
}

/// FoundationEssentials' `FileManager.fileExists(atPath:isDirectory:)` takes an `inout Bool`
/// where Foundation's takes an `ObjCBool`.
typealias ObjCBool = Bool

extension Bool {
    /// The value itself (Foundation's `ObjCBool.boolValue`).
    var boolValue: Bool { self }
}

/// Path strings: `(path as NSString).deletingLastPathComponent` reads the same as with Foundation.
typealias NSString = String

extension String {
    /// The path without its last component, as `NSString`'s: `/a/b` → `/a`, `/a` → `/`, `/` → `/`,
    /// `a` → `` (trailing slashes ignored). Text only: nothing is read from the disk.
    var deletingLastPathComponent: String {
        var path = Substring(self)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var parent = path[..<slash]
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? (hasPrefix("/") ? "/" : "") : String(parent)
    }

    /// The path with `component` added after a `/`, as `NSString`'s: `/a` + `b` → `/a/b`.
    func appendingPathComponent(_ component: String) -> String {
        if isEmpty { return component }
        return hasSuffix("/") ? self + component : self + "/" + component
    }
}
#else
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ends the process with `status` (C's `exit`: standard output is flushed). Named apart, since a
/// bare `exit(status)` inside a command or `CommandFailure` finds their own `exit` members.
func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
