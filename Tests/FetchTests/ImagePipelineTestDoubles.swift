import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import FetchTesting
import Foundation
import Logging
import Policy
import TestSupport

/// The body a double "downloads" for `url`: different for every URL, never empty.
func body(of url: ImageURL) -> [UInt8] { Array("image bytes of \(url)".utf8) }

/// `http://127.0.0.1:9/<name>`: a URL no test ever connects to (the doubles answer instead).
func doubleURL(_ name: String) -> ImageURL { ImageURL("http://127.0.0.1:9/\(name)")! }

/// A log handler that keeps every message with its level and metadata, for tests.
struct RecordingLogHandler: LogHandler {
    /// The messages logged so far, shared by every copy of the handler.
    final class Records: @unchecked Sendable {
        // Guards `entries`.
        private let lock = NSLock()
        private var entries: [(level: Logger.Level, message: String, metadata: [String: String])] = []

        func append(_ entry: (level: Logger.Level, message: String, metadata: [String: String])) {
            lock.withLock { entries.append(entry) }
        }

        var all: [(level: Logger.Level, message: String, metadata: [String: String])] { lock.withLock { entries } }
    }

    let records: Records
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.append((event.level, event.message.description, merged.mapValues { $0.description }))
    }

    /// A logger writing to a fresh set of records.
    static func logger() -> (Logger, Records) {
        let records = Records()
        return (Logger(label: "test") { _ in RecordingLogHandler(records: records) }, records)
    }
}

extension ScriptedDownloader {
    /// A new downloader answering every URL at once with its body (`body(of:)`).
    static var instant: ScriptedDownloader { ScriptedDownloader { .bytes(body(of: $0.url)) } }
}

/// A store for `DiskWriteQueue` whose writes block until the test lets them through, one
/// `release()` per write; counts what it stored.
final class BlockingStore: @unchecked Sendable {
    private let permits = DispatchSemaphore(value: 0)
    // Guards `entered` and `stored`.
    private let lock = NSLock()
    private var enteredCount = 0
    private var storedURLs: [ImageURL] = []

    /// Writes that began (and wait for a permit, or are done).
    var entered: Int { lock.withLock { enteredCount } }
    /// What was stored, in order.
    var stored: [ImageURL] { lock.withLock { storedURLs } }

    /// Lets `count` more writes finish.
    func release(_ count: Int = 1) { for _ in 0..<count { permits.signal() } }

    func store(_ bytes: [UInt8], _ url: ImageURL) throws(DiskCacheError) {
        lock.withLock { enteredCount += 1 }
        permits.wait()
        lock.withLock { storedURLs.append(url) }
    }
}

/// Holds a loopback server's answers until the test opens it: `server.route(path, gate.hold(response))`.
/// Waiting for a state (the request arrived, the waiters registered) replaces guessed delays.
final class ServerGate: @unchecked Sendable {
    // Guards `isOpen`; `opened` wakes the server threads held.
    private let lock = NSLock()
    private var isOpen = false
    private var held = 0
    private let opened = DispatchSemaphore(value: 0)

    /// A route answer that waits for `open()` (on the server's connection thread), then is `response`.
    func hold(_ response: TestHTTPServer.Response) -> TestHTTPServer.Response {
        .dynamic { [self] _ in
            let wait = lock.withLock { () -> Bool in
                if !isOpen { held += 1 }
                return !isOpen
            }
            if wait { opened.wait() }
            return response
        }
    }

    /// Lets every held and later answer go.
    func open() {
        let waiting = lock.withLock { () -> Int in
            defer { isOpen = true; held = 0 }
            return isOpen ? 0 : held
        }
        for _ in 0..<waiting { opened.signal() }
    }

    deinit { open() }
}
