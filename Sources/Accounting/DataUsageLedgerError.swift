import HTTPSemantics
/// A failure of the usage ledger, naming the file: `DIR/usage/2026-11-23.json: is a symbolic
/// link, not a regular file; …`.
///
/// A struct over a private code, so that a new code never breaks a caller's `switch`: compare
/// `error.code` with the static codes.
public struct DataUsageLedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case damaged, notRegular, notACache, readFailed, writeFailed
        }

        private let value: Value

        /// A day file that is not a valid record (torn by hand, another program's file, random
        /// bytes): when saving, it was set aside (renamed `….damaged-<16 hex>`) and the day
        /// counted from zero; when reading, it is not counted.
        public static let damaged = Code(value: .damaged)
        /// Something other than a regular file or folder (a symbolic link, a FIFO, a device) where
        /// the ledger keeps a file or its folder: refused, never opened or followed.
        public static let notRegular = Code(value: .notRegular)
        /// The folder has no `.imgpolicy-cache` marker: the ledger is kept only in a cache folder.
        public static let notACache = Code(value: .notACache)
        /// A file or folder could not be read.
        public static let readFailed = Code(value: .readFailed)
        /// The record could not be written (or locked); the previous one is untouched.
        public static let writeFailed = Code(value: .writeFailed)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The file or folder concerned.
    public var path: String
    /// What is wrong, in one line.
    public var message: String
    /// The kind of failure.
    public var code: Code

    /// Creates an error.
    public init(path: String, message: String, code: Code) {
        self.path = path
        self.message = message
        self.code = code
    }

    /// `PATH: message`.
    public var description: String { "\(path): \(message)" }
}
