import Logging
import Policy
import Support
import Caching
import HTTPSemantics

/// The usage kept across runs: one file per UTC day in the cache folder's `usage/` subfolder,
/// which the disk cache never removes (not by `cache clear`, not by eviction).
///
/// ```
/// <cache folder>/usage/2026-11-23.json    one day's DataUsage (JSON, see DataUsage+JSON.swift)
/// <cache folder>/usage/lock               held with flock around each read-merge-write
/// ```
///
/// ```swift
/// let ledger = DataUsageLedger(cacheFolder: disk.folder)
/// try ledger.save(recorder)                         // adds what the recorder has not saved yet
/// let month = ledger.read().total(since: UsageDay.today().firstOfMonth)
/// ```
///
/// - **No lost update.** `add` takes an exclusive `flock` on `usage/lock`, reads the day's file,
///   adds, and replaces the file (a temporary file, `fsync`, `rename`: `AtomicFileWriter`), then
///   unlocks. Several processes or threads adding at once each see the others' sums.
/// - **Kill -9 at any moment** leaves the old file or the new one, never half of one; a
///   temporary left behind is ignored by readers and removed by the next `add` (under the lock
///   no writer is in the middle of one).
/// - **Untrusted files.** Reads take no lock (files are replaced whole). Every name is reached
///   relative to the folder without following a symbolic link; a file is checked to be regular
///   before it is read, and read non-blocking. A symbolic link, FIFO or device in place of
///   `usage/`, the lock or a day file is refused with an error naming it (`.notRegular`), never
///   followed. A damaged day file is reported (`.damaged`): `add` sets it aside
///   (`….damaged-<16 hex>`) before writing the day anew, so it is never silently overwritten.
/// - **Only in a cache folder.** `add` writes only where the `.imgpolicy-cache` marker is.
///
/// Thread safety: a value; every method may be called from any thread at once. `add` blocks
/// while another process holds the lock (one small file's read and write): call it off the main
/// thread.
public struct DataUsageLedger: Sendable {
    /// The cache folder holding the ledger.
    public let cacheFolder: String
    private let logger: Logger

    /// The ledger's subfolder name in the cache folder.
    static let folderName = DiskCacheFolder.usageFolderName
    static let lockName = DiskCacheFolder.usageLockName
    /// The largest day file read (a real one is a few KiB).
    static let maximumFileSize = 1 << 20

    /// A ledger in `cacheFolder` (nothing is opened until it is used).
    public init(cacheFolder: String, logger: Logger = .disabled) {
        self.cacheFolder = cacheFolder.count > 1 && cacheFolder.hasSuffix("/") ? String(cacheFolder.dropLast()) : cacheFolder
        self.logger = logger
    }

    /// `<cache folder>/usage`.
    public var folder: String { cacheFolder + "/" + Self.folderName }

    /// The file of `day`.
    public func path(of day: UsageDay) -> String { folder + "/" + Self.fileName(day) }

    static func fileName(_ day: UsageDay) -> String { "\(day).json" }

    /// Whether `name` in `usage/` is one the ledger makes (the cache folder's layout says it:
    /// `DiskCacheFolder.isUsageLedgerName`).
    static func isOwnName(_ name: String) -> Bool { DiskCacheFolder.isUsageLedgerName(name) }

    // MARK: - Adding

    /// Adds `usage` to `day`'s record (today, UTC, by default) under the ledger's lock.
    ///
    /// - Returns: the damaged day files set aside on the way (code `.damaged`; each names the
    ///   file and where it went); empty almost always.
    /// - Throws: `DataUsageLedgerError` naming the path when the folder is not a cache, a name
    ///   is not a regular file or folder, or the record cannot be locked or written (the previous
    ///   record is then untouched).
    @discardableResult
    public func add(_ usage: DataUsage, on day: UsageDay = .today()) throws(DataUsageLedgerError) -> [DataUsageLedgerError] {
        guard !usage.isEmpty else { return [] }
        guard let folderFD = try openUsageFolder(create: true) else {
            throw DataUsageLedgerError(path: folder, message: "the folder disappeared while it was created", code: .writeFailed)
        }
        defer { close(folderFD) }
        let lockFD = try lock(in: folderFD)
        defer { close(lockFD) }  // releases the lock
        sweepTemporaries(in: folderFD)
        var setAside: [DataUsageLedgerError] = []
        var total = usage
        if let beyond = usage.totals.firstBeyondMaximum {
            throw DataUsageLedgerError(path: path(of: day), message: "cannot record a usage whose total \(beyond) is more than "
                                       + "\(DataUsage.maximumCount); the record is untouched", code: .writeFailed)
        }
        switch readDay(day, in: folderFD) {
        case .success(let existing?) where (existing.totals + usage.totals).firstBeyondMaximum != nil:
            // A day within the bound that cannot take a real run's usage holds no real counts.
            let beyond = (existing.totals + usage.totals).firstBeyondMaximum ?? ""
            let error = DataUsageLedgerError(path: path(of: day), message: "damaged usage record (with this run's usage its total \(beyond) "
                                             + "would be more than \(DataUsage.maximumCount), more than any real usage)", code: .damaged)
            setAside.append(try putAside(day, in: folderFD, because: error))
        case .success(let existing):
            if let existing { total = existing + usage }
        case .failure(let error) where error.code == .damaged:
            setAside.append(try putAside(day, in: folderFD, because: error))
        case .failure(let error):
            throw error
        }
        let text = JSONWriter.compactText(of: total.ledgerJSON(day: day)) + "\n"
        do {
            try AtomicFileWriter.write(Array(text.utf8), named: Self.fileName(day), inFolder: folderFD, displayPath: path(of: day))
        } catch {
            throw DataUsageLedgerError(path: path(of: day), message: "cannot write the usage record: \(error.message)", code: .writeFailed)
        }
        logger.debug("usage saved", metadata: ["file": "\(path(of: day))"])
        return setAside
    }

    /// Adds what `recorder` has not saved yet to today's record; when that fails, the recorder
    /// keeps it for the next save (nothing counted is lost).
    @discardableResult
    public func save(_ recorder: DataUsageRecorder, on day: UsageDay = .today()) throws(DataUsageLedgerError) -> [DataUsageLedgerError] {
        let unsaved = recorder.takeUnsaved()
        do {
            return try add(unsaved, on: day)
        } catch {
            recorder.restoreUnsaved(unsaved)
            throw error
        }
    }

    // MARK: - Reading

    /// What the ledger holds, and the files it could not count.
    public struct Reading: Sendable {
        /// Each day's usage.
        public var days: [UsageDay: DataUsage] = [:]
        /// Files not counted: damaged, not regular, unreadable (each names its path).
        public var problems: [DataUsageLedgerError] = []

        /// The sum of the days from `since` on (every day when nil).
        public func total(since: UsageDay? = nil) -> DataUsage {
            days.reduce(into: DataUsage()) { sum, entry in
                if since.map({ entry.key >= $0 }) ?? true { sum.merge(entry.value) }
            }
        }
    }

    /// Reads every day's record (no lock: files are replaced whole). A missing cache folder or
    /// `usage/` is an empty ledger.
    public func read() -> Reading {
        var reading = Reading()
        let folderFD: Int32
        do {
            guard let fd = try openUsageFolder(create: false) else { return reading }
            folderFD = fd
        } catch {
            reading.problems.append(error)
            return reading
        }
        defer { close(folderFD) }
        // The ledger's totals, oldest day first: a day that would take one past the bound is
        // not counted (reported), so that no total or figure printed from them saturates.
        var totals = DataUsage.Totals()
        for name in (FileIO.names(in: folderFD) ?? []).sorted() {
            guard name.hasSuffix(".json"), let day = UsageDay(parsing: String(name.dropLast(5))), Self.fileName(day) == name else { continue }
            switch readDay(day, in: folderFD) {
            case .success(let usage):
                guard let usage else { continue }
                let sum = totals + usage.totals
                if let total = sum.firstBeyondMaximum {
                    let error = DataUsageLedgerError(path: path(of: day), message: "damaged usage record (not counted: with it the ledger's total "
                                                     + "\(total) would be more than \(DataUsage.maximumCount), more than any real usage)", code: .damaged)
                    logger.warning("usage record not counted", metadata: ["file": "\(error.path)", "reason": "\(error.message)"])
                    reading.problems.append(error)
                    continue
                }
                totals = sum
                reading.days[day] = usage
            case .failure(let error):
                logger.warning("usage record not counted", metadata: ["file": "\(error.path)", "reason": "\(error.message)"])
                reading.problems.append(error)
            }
        }
        return reading
    }

    // MARK: - Files

    /// Opens `usage/` (creating it when asked, after checking the cache marker); nil when it
    /// does not exist and was not to be created.
    private func openUsageFolder(create: Bool) throws(DataUsageLedgerError) -> Int32? {
        let cacheFD = DescriptorReserve.admit(open(cacheFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard cacheFD >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw DataUsageLedgerError(path: cacheFolder, message: "cannot open the cache folder: \(errnoText(errno).lowercased())", code: create ? .writeFailed : .readFailed)
        }
        defer { close(cacheFD) }
        if create {
            var info = stat()
            guard fstatat(cacheFD, DiskCacheFolder.markerName, &info, AT_SYMLINK_NOFOLLOW) == 0, FileIO.isRegular(info) else {
                throw DataUsageLedgerError(path: cacheFolder, message: "not a cache folder (no \(DiskCacheFolder.markerName) marker): the usage ledger is kept only in a cache folder", code: .notACache)
            }
            if mkdirat(cacheFD, Self.folderName, 0o700) != 0 && errno != EEXIST {
                throw DataUsageLedgerError(path: folder, message: "cannot create the folder: \(errnoText(errno).lowercased())", code: .writeFailed)
            }
        }
        let fd = DescriptorReserve.admit(openat(cacheFD, Self.folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && !create { return nil }
            if code == ELOOP || code == ENOTDIR {
                var info = stat()
                let kind = fstatat(cacheFD, Self.folderName, &info, AT_SYMLINK_NOFOLLOW) == 0 ? FileIO.kind(info) : "not a folder"
                throw DataUsageLedgerError(path: folder, message: "is \(kind), not a folder; the usage ledger is never kept through it (remove it)", code: .notRegular)
            }
            throw DataUsageLedgerError(path: folder, message: "cannot open the folder: \(Support.errnoText(code).lowercased())", code: create ? .writeFailed : .readFailed)
        }
        return fd
    }

    /// Opens `usage/lock` (a regular file, never through a link) and waits for its exclusive lock.
    private func lock(in folderFD: Int32) throws(DataUsageLedgerError) -> Int32 {
        let path = folder + "/" + Self.lockName
        let fd = DescriptorReserve.admit(openat(folderFD, Self.lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600))
        guard fd >= 0 else {
            throw errno == ELOOP
                ? DataUsageLedgerError(path: path, message: "is a symbolic link, not a regular file; the usage ledger never follows it (remove it)", code: .notRegular)
                : DataUsageLedgerError(path: path, message: "cannot open the lock file: \(errnoText(errno).lowercased())", code: .writeFailed)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, FileIO.isRegular(info) else {
            close(fd)
            throw DataUsageLedgerError(path: path, message: "is \(FileIO.kind(info)), not a regular file; the usage ledger never uses it (remove it)", code: .notRegular)
        }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = errnoText(errno).lowercased()
                close(fd)
                throw DataUsageLedgerError(path: path, message: "cannot lock: \(reason)", code: .writeFailed)
            }
        }
        return fd
    }

    /// The record of `day`: nil when there is none; `.damaged`, `.notRegular` or `.readFailed`.
    private func readDay(_ day: UsageDay, in folderFD: Int32) -> Result<DataUsage?, DataUsageLedgerError> {
        let name = Self.fileName(day), path = path(of: day)
        var info = stat()
        guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            return errno == ENOENT ? .success(nil) : .failure(.init(path: path, message: "cannot read: \(errnoText(errno).lowercased())", code: .readFailed))
        }
        let notRegular = { (info: stat) in
            DataUsageLedgerError(path: path, message: "is \(FileIO.kind(info)), not a regular file; the usage ledger never reads or writes through it (remove it)", code: .notRegular)
        }
        guard FileIO.isRegular(info) else { return .failure(notRegular(info)) }
        let fd = DescriptorReserve.admit(openat(folderFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC))
        guard fd >= 0 else {
            return errno == ENOENT ? .success(nil) : .failure(.init(path: path, message: "cannot open: \(errnoText(errno).lowercased())", code: .readFailed))
        }
        defer { close(fd) }
        guard fstat(fd, &info) == 0 else { return .failure(.init(path: path, message: "cannot read: \(errnoText(errno).lowercased())", code: .readFailed)) }
        guard FileIO.isRegular(info) else { return .failure(notRegular(info)) }
        let damaged = { (reason: String) in
            Result<DataUsage?, DataUsageLedgerError>.failure(.init(path: path, message: "damaged usage record (\(reason))", code: .damaged))
        }
        guard info.st_size >= 0, info.st_size <= Self.maximumFileSize else { return damaged("larger than \(Self.maximumFileSize >> 20) MiB") }
        guard let bytes = FileIO.readAll(fd, size: Int(info.st_size)) else { return damaged("shorter than its size") }
        do {
            let value = try JSONParser(maximumDepth: 8).parse(bytes)
            return .success(try DataUsage(ledgerJSON: value, day: day))
        } catch let error as JSONParser.SyntaxError {
            return damaged("not JSON: line \(error.line): \(error.message)")
        } catch let error as LedgerFormatError {
            return damaged(error.message)
        } catch {
            return damaged("\(error)")
        }
    }

    /// Renames a damaged day file `….damaged-<16 hex>` (under the lock), so that it is kept.
    private func putAside(_ day: UsageDay, in folderFD: Int32, because error: DataUsageLedgerError) throws(DataUsageLedgerError) -> DataUsageLedgerError {
        let name = Self.fileName(day)
        let aside = name + ".damaged-" + FileIO.randomSuffix()
        guard renameat(folderFD, name, folderFD, aside) == 0 else {
            throw DataUsageLedgerError(path: error.path, message: "\(error.message); cannot set it aside: \(errnoText(errno).lowercased())", code: .writeFailed)
        }
        logger.warning("damaged usage record set aside", metadata: ["file": "\(error.path)", "as": "\(folder)/\(aside)", "reason": "\(error.message)"])
        return DataUsageLedgerError(path: error.path, message: "\(error.message); set aside as \(aside), the day counted from zero", code: .damaged)
    }

    /// Removes temporaries a killed writer left (`.<day>.json.tmp-XXXXXX`, AtomicFileWriter's
    /// names); called under the lock, when no writer is between its create and its rename.
    private func sweepTemporaries(in folderFD: Int32) {
        for name in FileIO.names(in: folderFD) ?? [] where name.hasPrefix(".") && name.contains(".json.tmp-") {
            var info = stat()
            guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, FileIO.isRegular(info) else { continue }
            if unlinkat(folderFD, name, 0) == 0 {
                logger.info("stale usage temporary removed", metadata: ["file": "\(folder)/\(name)"])
            }
        }
    }
}
