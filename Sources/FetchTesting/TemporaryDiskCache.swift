import Fetch
import Foundation
import Logging
import Policy
import Support

/// The disk cache stand-in for an app's tests: a real `DiskCache` over a fresh folder of its own
/// under the temporary directory, removed when this value is released (or by `remove()`).
///
/// Why not an in-memory fake: `ImagePipeline` takes a `DiskCache` (its `disk` property is one),
/// and what a test of an app wants to see (an entry written after a download, a hit after a
/// relaunch, eviction at the capacity) is the real cache's behaviour. A fresh folder makes it
/// private to the test and as cheap as a few small files.
///
/// ```swift
/// import FetchTesting
///
/// @Test func aSecondPipelineReadsWhatTheFirstWrote() async throws {
///     let disk = try TemporaryDiskCache()
///     try disk.cache.store(jpeg, for: url)                         // seed it, or let a pipeline write
///     let pipeline = ImagePipeline(downloader: ScriptedDownloader(), disk: disk.cache)
///     #expect(try await pipeline.image(for: url).source == .disk)  // no download
/// }
/// ```
///
/// Thread safety: as `DiskCache` (any task at once). `remove()` must not race uses of `cache`.
///
/// ## See Also
///
/// - <doc:TestingAnApp>
public final class TemporaryDiskCache: Sendable {
    /// The cache, over `folder`.
    public let cache: DiskCache

    /// The folder (under the system's temporary directory), removed with this value.
    public let folder: String

    /// Creates a cache in a new empty folder.
    ///
    /// - Parameters:
    ///   - capacity: the most bytes kept (default 64 MiB).
    ///   - logger: the cache's logger (default: off).
    /// - Throws: `DiskCacheError` when the folder cannot be made or opened.
    public init(capacity: Int = 64 << 20, logger: Logger = .disabled) throws(DiskCacheError) {
        var template = Array((NSTemporaryDirectory() + "/imgpolicy-disk-cache-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) } != nil
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard made else {
            throw DiskCacheError(path: path, message: "cannot create a temporary folder (\(String(cString: strerror(errno))))", code: .openFailed)
        }
        folder = path
        cache = try DiskCache(folder: path, capacity: capacity, logger: logger)
    }

    /// Removes the folder and everything in it now (also done when this value is released).
    public func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit {
        remove()
    }
}
