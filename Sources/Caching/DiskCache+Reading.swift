import Support
import Logging
import Policy

import HTTPSemantics

/// The reading side: "is it cached?" from memory, the images and freshness read from the entry
/// files, what the cache holds, and its listing.
extension DiskCache {
    /// Whether an entry for `url` is in the index, answered from memory: no system call, hit or
    /// miss, on the caller's thread (the policy asks once per row in view, from the cooperative
    /// pool or the app's thread). One exception: until the journal's table has been read into
    /// memory (a pipeline starts that read when it is made: milliseconds; a process that only
    /// looks, such as a decision, never pays for it), a lookup reads its key's probe run from the
    /// file (one `pread` of 2 KiB, see `DiskCacheIndex`).
    ///
    /// The index follows the journal by other means: every store reads it first, the pipeline
    /// reads it on a disk thread before it downloads what the index misses (`refreshIfDue()`), and
    /// a read (`storedImage(for:)`) looks at the entry's file itself; and a miss here starts
    /// a read of what other processes appended, on a thread of its own, when the last read began
    /// more than `inspectionRefreshInterval` ago. So an entry another process stored is "cached"
    /// for every ask after that read: within `inspectionRefreshInterval` plus one read of the
    /// journal's new records while someone keeps asking (docs/disk-cache.md, "Index, access order,
    /// capacity").
    public func containsImage(at url: ImageURL) -> Bool {
        let key = Hash128(of: url.absoluteString)
        let (found, lazy) = index.withLock { ($0.contains(key), $0.isLazy) }
        // A table still in the file is read into memory on that thread too (until then, a lookup
        // reads its probe run: one `pread`).
        if !found || lazy { refreshInBackgroundIfDue() }
        return found
    }

    /// Whether the index holds `url`, from memory, starting no background read of the journal
    /// (for callers that read it themselves: `refreshIfDue()`).
    package func indexHolds(_ url: ImageURL) -> Bool {
        let key = Hash128(of: url.absoluteString)
        return index.withLock { $0.contains(key) }
    }

    /// What a disk cache holds: entries, or partial bodies, and their bytes.
    public struct Holdings: Sendable, Equatable {
        /// How many.
        public var count: Int
        /// Their bytes in all.
        public var bytes: Int

        /// Creates a read-out.
        public init(count: Int, bytes: Int) {
            self.count = count
            self.bytes = bytes
        }
    }

    /// Entries and bytes in the index.
    public var statistics: Holdings {
        index.withLock { Holdings(count: $0.count, bytes: $0.totalBytes) }
    }

    /// Failures and clean-ups so far (see `Counters`).
    public var counters: Counters { counts.withLock { $0 } }


    /// The image stored for `url`, or nil when there is none or it is damaged (then it is removed
    /// and logged). Never blocks on a FIFO or device put in an entry's place (it is removed).
    /// Marks the entry as used, in the journal (kept in memory and appended with the next 63 uses,
    /// the next store or removal, or when the cache is released). A stale entry is returned all the same: see
    /// `storedImage(for:)` for its freshness.
    public func image(for url: ImageURL) -> [UInt8]? {
        storedImage(for: url)?.bytes
    }

    /// The image stored for `url` with its HTTP freshness, or nil as `image(for:)`. An entry
    /// written before entries kept their freshness (format 1) reads as one without any HTTP
    /// information received when its file was last written: fresh for the default lifetime from then.
    public func storedImage(for url: ImageURL) -> StoredImage? {
        let key = Hash128(of: url.absoluteString)
        switch layout.readEntry(key) {
        case .missing:
            forget(key)
            return nil
        case .failed(let error):
            // Not repairable by removal (a symbolic link or a file where the shard should be, no
            // permission): out of this process's index, so that it is no longer taken as cached
            // and the caller loads it again (its store then reports why it cannot be written).
            // Not journaled: the file may still be there, readable by others. The journal is read
            // first, so that no record read later (this process's own store) brings it back.
            logger.warning("disk cache: cannot read an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
            refresh()
            index.withLock { _ = $0.remove(key) }
            return nil
        case .notRegular(let kind, let removal):
            count { $0.damagedRemoved += 1 }
            logger.warning("disk cache: removed \(kind) found in place of an entry", metadata: ["path": "\(layout.entryPath(key))", "url": "\(url)"])
            if let removal { reportRemovalFailure(removal) }
            forget(key, journaled: true)
            return nil
        case .bytes(let file, let modified):
            guard let contents = DiskCacheEntry.contents(of: file, for: url) else {
                count { $0.damagedRemoved += 1 }
                logger.warning("disk cache: removed a damaged entry", metadata: ["path": "\(layout.entryPath(key))", "url": "\(url)", "bytes": "\(file.count)"])
                if let failure = layout.removeEntry(key) { reportRemovalFailure(failure) }
                forget(key, journaled: true)
                return nil
            }
            let known = index.withLock { index in
                if index.use(key) { return true }
                index.store(key, size: file.count)
                return false
            }
            if known {
                // Kept in memory and appended in batches (`DiskCacheJournal.appendUse`): a use is
                // a hint for eviction, so a hit costs no system call on the journal most times.
                if let failure = journal.appendUse(.init(key: key, size: file.count, operation: .used)) { reportJournalFailure(failure) }
            } else {
                record([.init(key: key, size: file.count, operation: .stored)])
            }
            compactIfNeeded()  // a process that only reads still keeps the journal small
            return StoredImage(bytes: contents.body, freshness: contents.freshness ?? HTTPFreshness(storedAt: HTTPDate(secondsSince1970: modified)),
                               hasFreshnessRecord: contents.freshness != nil)
        }
    }

    /// The freshness of the entry for `url`, reading only its header and freshness record (never
    /// the body; not a use): nil when there is no entry, or it is not an intact one for `url`
    /// (`storedImage(for:)` then removes it). A format-1 entry answers as `storedImage(for:)` does.
    public func freshness(of url: ImageURL) -> HTTPFreshness? {
        let key = Hash128(of: url.absoluteString)
        switch layout.readFreshness(key: key, url: Array(url.absoluteString.utf8)) {
        case .done(let freshness): return freshness
        case .withoutRecord(let modified): return HTTPFreshness(storedAt: HTTPDate(secondsSince1970: modified))
        case .missing, .needsWholeRewrite, .damaged, .failed: return nil
        }
    }

    /// The body in `file` if it is a complete, intact entry file for `url`; nil for anything else
    /// (any bytes at all: this never traps).
    package static func body(of file: [UInt8], for url: ImageURL) -> [UInt8]? {
        DiskCacheEntry.body(of: file, for: url)
    }

    /// Every entry, by URL: its URL (read from its header), its file's size and its image's;
    /// entries with a damaged header, or not regular files, are skipped. Only the headers are
    /// read; nothing ever blocks.
    public func entries() -> [ListedEntry] {
        refresh()
        let keys = index.withLock { $0.byUse.map(\.key) }
        return keys.compactMap { layout.readHeader($0) }.map { ListedEntry(url: $0.url, size: $0.size, imageBytes: $0.imageBytes) }
            .sorted { $0.url < $1.url }
    }

    /// Where the entry for `url` lives (or would): `folder/ab/ab…`, for tools and comparisons.
    public func entryPath(for url: ImageURL) -> String {
        layout.entryPath(Hash128(of: url.absoluteString))
    }
}
