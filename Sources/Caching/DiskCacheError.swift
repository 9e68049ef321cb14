import HTTPSemantics
import Support
/// The disk cache could not open, write or remove something: the path, what failed and why.
///
/// A struct over a code (new codes never break a caller's `switch`):
/// ```swift
/// do { try cache.store(bytes, for: url) } catch where error.code == .tooLarge { … }
/// ```
public struct DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A file or folder could not be created, written or renamed (full disk, immutable folder,
        /// a file where a folder should be…).
        public static let writeFailed = Code("write failed")
        /// A file could not be removed.
        public static let removeFailed = Code("remove failed")
        /// The folder is not empty and holds no cache marker: it is not a cache, and nothing in it
        /// is read or removed.
        public static let notACache = Code("not a cache")
        /// The body or the URL is larger than the cache takes (`largestEntry`, the capacity, or
        /// `DiskCacheEntry.largestURL`): nothing was written.
        public static let tooLarge = Code("too large")
        /// The folder could not be opened or read.
        public static let openFailed = Code("open failed")

        /// The code's name.
        public var description: String { name }
    }

    /// The file or folder.
    public var path: String
    /// What failed, with the system's reason.
    public var message: String
    /// The kind of failure.
    public var code: Code

    /// An error about `path`.
    public init(path: String, message: String, code: Code = .writeFailed) {
        self.path = path
        self.message = message
        self.code = code
    }

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}

extension SystemError {
    /// This failure as the disk cache's error.
    var cacheError: DiskCacheError { DiskCacheError(path: path, message: message) }
}
