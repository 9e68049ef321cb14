/// Why an ``ImageSystem`` could not be made: what was wrong, and what to do, in one line.
///
/// A public struct over a private code: new kinds may be added without breaking callers; compare
/// `kind` with the static members (`error.kind == .noCacheFolder`).
public struct ImageSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case noCacheFolder, cacheNotOpened, invalidNetworkVariable, networkNotFollowed
        }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The default cache folder has no trustworthy base: `XDG_CACHE_HOME` is not an absolute
        /// path and `HOME` is not an existing absolute folder.
        public static let noCacheFolder = Kind(.noCacheFolder)
        /// The disk cache could not be opened (a folder that cannot be made or read, or one that
        /// holds something other than a cache).
        public static let cacheNotOpened = Kind(.cacheNotOpened)
        /// `IMGPOLICY_NETWORK` holds something that is not a network state.
        public static let invalidNetworkVariable = Kind(.invalidNetworkVariable)
        /// `LinuxReachability` could not start (netlink forbidden by a sandbox, descriptors
        /// exhausted).
        public static let networkNotFollowed = Kind(.networkNotFollowed)

        /// The kind in a few words.
        public var description: String {
            switch code {
            case .noCacheFolder: "no cache folder"
            case .cacheNotOpened: "cache not opened"
            case .invalidNetworkVariable: "invalid IMGPOLICY_NETWORK"
            case .networkNotFollowed: "network not followed"
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// The one-line message: what was wrong (the path, the value) and what to do.
    public var message: String

    /// Creates an error.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The one-line message.
    public var description: String { message }
}
