import Support

/// A settings store kept in a JSON file (one object, key → value), safe to share between
/// processes.
///
/// - Reads parse the file once and reuse it until the file changes (checked with one `stat`).
/// - Writes take an exclusive lock (`flock` on `<file>.lock`, next to the real file: every path
///   to one file, through any symbolic links, takes the same lock), read the file afresh, change
///   the one key and replace the file atomically (temporary file, `fsync`, `rename`). Two
///   processes setting different keys at the same moment both keep their update, whichever path
///   each uses, and keys the SDK does not know are kept as they were.
/// - A path that can never be written (a FIFO, device, socket or folder, or a symbolic link to
///   nothing) is refused before anything is created: no lock file, no folder.
/// - A file that is not valid JSON, or not an object, is an error on every read and write, and is
///   never overwritten: the user's file is theirs to fix.
/// - A missing file is an empty store; the first write creates it and its folders.
///
/// ## See Also
///
/// - <doc:DecidingWhatToShow>
/// - <doc:TheCommand>
public final class FileSettingsStore: SettingsStore {
    /// The file's path.
    public let path: String

    private struct Snapshot {
        var identity: FileIdentity?
        var members: [(key: String, value: JSONValue)]
    }

    private struct State {
        var snapshot: Snapshot?
        var defaults: [String: SettingValue] = [:]
    }

    // Guards the parsed snapshot and the registered defaults.
    private let state = Locked(State())

    // Why there is no file to write (no usable default location); reads are then empty.
    private let unavailable: String?

    /// Whether the store has no location (made without a usable HOME): reads are empty, writes fail.
    var isUnavailable: Bool { unavailable != nil }

    /// A store backed by the file at `path`. Nothing is read until a value is asked for.
    public init(path: String) {
        self.path = path
        unavailable = nil
    }

    private init(unavailableAt path: String, reason: String) {
        self.path = path
        unavailable = reason
    }

    /// `$XDG_CONFIG_HOME/imgpolicy/settings.json` (an absolute path), else
    /// `$HOME/.config/imgpolicy/settings.json` (`HOME` an existing absolute folder), else nil:
    /// an unset or missing `HOME` never turns into a relative path or a new home folder.
    public static func defaultPath(environment: [String: String]) -> String? {
        UserFolder.base("XDG_CONFIG_HOME", homeSubfolder: ".config", environment: environment)
            .map { $0 + "/imgpolicy/settings.json" }
    }

    /// The store at `defaultPath(environment:)`; when there is none, a store with no values whose
    /// writes fail (`.writeFailed`) saying to pass a settings file or set `HOME`.
    public static func atDefaultLocation(environment: [String: String]) -> FileSettingsStore {
        if let path = defaultPath(environment: environment) { return FileSettingsStore(path: path) }
        return FileSettingsStore(unavailableAt: "~/.config/imgpolicy/settings.json",
                                 reason: UserFolder.missingMessage("XDG_CONFIG_HOME", what: "settings", option: "--settings FILE"))
    }

    /// Where the values live, for messages.
    public var location: String { path }

    /// The value stored under `key`, ignoring registered defaults.
    public func storedValue(forKey key: String) throws(DataFileError) -> SettingValue? {
        try currentMembers().first { $0.key == key }.map { SettingValue($0.value) }
    }

    /// Every stored value, without registered defaults.
    public func storedValues() throws(DataFileError) -> [String: SettingValue] {
        Dictionary(try currentMembers().map { ($0.key, SettingValue($0.value)) }) { first, _ in first }
    }

    /// Stores `value` under `key`.
    public func set(_ value: SettingValue, forKey key: String) throws(DataFileError) {
        if case .double(let number) = value, !number.isFinite {
            throw DataFileError(.invalid, source: path, message: "\"\(key)\": \(number) cannot be stored in JSON")
        }
        try update { members in
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = value.jsonValue
            } else {
                members.append((key, value.jsonValue))
            }
        }
    }

    /// Removes the value stored under `key`.
    public func removeValue(forKey key: String) throws(DataFileError) {
        try update { members in members.removeAll { $0.key == key } }
    }

    /// Adds values used when nothing is stored.
    public func register(defaults: [String: SettingValue]) {
        state.withLock { $0.defaults.merge(defaults) { _, new in new } }
    }

    /// The defaults registered so far.
    public var registeredDefaults: [String: SettingValue] {
        state.withLock { $0.defaults }
    }

    /// The default registered for `key`, read under the lock without copying the dictionary
    /// out (whose type a decision would otherwise make at run time: docs/startup.md).
    public func registeredDefault(forKey key: String) -> SettingValue? {
        state.withLock { $0.defaults[key] }
    }

    /// The line of `key` in the file as last read, for error messages.
    public func sourceLine(forKey key: String) -> Int? {
        state.withLock { $0.snapshot?.members.first { $0.key == key }?.value.line }
    }

    // MARK: - Reading

    private func currentMembers() throws(DataFileError) -> [(key: String, value: JSONValue)] {
        if unavailable != nil { return [] }
        let identity = FileIdentity(path: path)
        if let cached = state.withLock({ $0.snapshot }), cached.identity == identity, identity != nil {
            return cached.members
        }
        let snapshot = try readSnapshot()
        state.withLock { $0.snapshot = snapshot }
        return snapshot.members
    }

    private func readSnapshot() throws(DataFileError) -> Snapshot {
        let identity = FileIdentity(path: path)
        let bytes: [UInt8]
        do {
            bytes = try DataFileReader.read(path)
        } catch where error.code == .notFound {
            return Snapshot(identity: nil, members: [])
        }
        let document = try JSONParser().parse(bytes, source: path)
        guard case .object(let members) = document.kind else {
            throw DataFileError(.malformed, source: path, line: document.line,
                                message: "expected a JSON object of settings, found \(document.typeDescription)")
        }
        return Snapshot(identity: identity, members: members)
    }

    // MARK: - Writing

    private func update(_ change: (inout [(key: String, value: JSONValue)]) -> Void) throws(DataFileError) {
        if let unavailable { throw DataFileError(.writeFailed, source: path, message: unavailable) }
        try refuseUnwritablePath()
        do throws(SystemError) {
            try AtomicFileWriter.makeFolders(AtomicFileWriter.parentFolder(of: path), for: path)
        } catch {
            throw DataFileError(writing: error)
        }
        let lockFD = DescriptorReserve.admit(open(lockPath(), O_RDWR | O_CREAT | O_CLOEXEC, 0o644))
        guard lockFD >= 0 else {
            let number = errno
            throw DataFileError(.writeFailed, source: path, message: "cannot open the lock file: \(errnoText(number).lowercased())", systemErrno: number)
        }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let number = errno
                throw DataFileError(.writeFailed, source: path, message: "cannot lock the file: \(errnoText(number).lowercased())", systemErrno: number)
            }
        }
        defer { flock(lockFD, LOCK_UN) }
        // Read afresh under the lock: another process may have written since our last read.
        var members = try readSnapshot().members
        change(&members)
        let text = JSONWriter.text(of: JSONValue(.object(members)))
        do throws(SystemError) {
            try AtomicFileWriter.write(Array(text.utf8), to: path, createFolders: false)  // made above, before the lock
        } catch {
            throw DataFileError(writing: error)
        }
        let snapshot = Snapshot(identity: FileIdentity(path: path), members: members)
        state.withLock { $0.snapshot = snapshot }
    }

    /// Refuses, before any lock file or folder is created, a path whose file could never be
    /// replaced: a link to nothing, or anything but a regular file (as a read would).
    private func refuseUnwritablePath() throws(DataFileError) {
        // Missing (or not examinable: the error comes with the write): a new file.
        guard let kind = FileKind(path: path, followingLinks: false) else { return }
        let target = kind == .symbolicLink ? FileKind(path: path, followingLinks: true) : kind
        guard let target else {
            throw DataFileError(.writeFailed, source: path,
                                message: "is a symbolic link to a missing file (\(errnoText(errno).lowercased())); refusing to replace the link")
        }
        guard target == .regular else {
            throw DataFileError(.unreadable, source: path, message: "is \(target.article), not a regular file")
        }
    }

    /// The lock file for the real file behind `path`: `realpath` of the file, or of its folder
    /// when the file does not exist yet, plus `.lock`; so that every link to one file shares it.
    private func lockPath() -> String {
        if let real = canonical(path) { return real + ".lock" }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if let folder = canonical(AtomicFileWriter.parentFolder(of: path)) {
            return (folder == "/" ? "" : folder) + "/" + name + ".lock"
        }
        return path + ".lock"
    }

    private func canonical(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        // Not UTF-8: a decoded copy would name another file; the caller falls back to the path.
        return String(validatingCString: real)
    }
}

/// What tells one version of a file from another without reading it: device, inode, size and
/// modification time. An atomic replace always changes the inode.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    var modifiedNanoseconds: Int64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
        #endif
    }
}
