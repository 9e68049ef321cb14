import Support
import Logging
import Policy

import HTTPSemantics

/// Keeping the index current: reading the journal (what other processes appended, in the
/// background after a miss of "is it cached?"), rebuilding it from the folder, compacting it,
/// and appending this process's records.
extension DiskCache {
    /// The longest time "is it cached?" goes on answering a miss from an index that has not read
    /// the journal, while it is being asked: 100 ms. An entry stored by another process becomes
    /// visible to `containsImage(at:)` at most this long (plus one read of the journal's new
    /// records, on a background thread) after it was stored.
    public static let inspectionRefreshInterval: Duration = .milliseconds(100)

    /// Whether the journal was last read more than the refresh interval ago (memory only): the
    /// pipeline then reads it on a disk thread (`refreshIfDue()`) before it takes a miss for one.
    package var refreshIsDue: Bool {
        let now = ContinuousClock.now
        return refreshes.withLock { now - $0.lastRead >= $0.interval }
    }

    /// Reads what other processes appended to the journal when the last read began more than the
    /// refresh interval ago. It touches the disk: call it where blocking is allowed (the
    /// pipeline's disk threads).
    package func refreshIfDue() {
        guard refreshIsDue else { return }
        refresh()
        materializeIndex()
    }

    /// Reads and checks the journal's table when the index still leaves it in the file (see
    /// `DiskCacheIndex`): outside the index's lock, so that lookups meanwhile answer from the
    /// file; the records applied meanwhile are applied to the copy before it is swapped in.
    /// Where blocking is allowed: the background read, the pipeline's disk threads.
    func materializeIndex() {
        guard let (snapshot, state) = index.withLock({ index in index.lazyState.map { (index, $0) } }) else { return }
        var copy = snapshot
        copy.materialize()
        index.withLock { _ = $0.adopt(copy, of: state.table, keeping: state.kept) }
    }

    /// Reads the journal's table into memory on a thread of its own when the index still leaves
    /// it in the file: a long-lived owner (the pipeline) calls it once, when it starts, so that
    /// "is it cached?" answers from memory within milliseconds of the open instead of reading
    /// each lookup's probe run from the file until its first background read of the journal.
    package func readIndexInBackground() {
        guard indexIsLazy else { return }
        do {
            try OwnedThread.detached { [self] in materializeIndex() }
        } catch {
            // No thread now: lookups go on reading their probe runs until a store or a background read.
            logger.debug("disk cache: cannot start a thread to read the journal's table", metadata: ["code": "\(error.code)"])
        }
    }

    /// How "is it cached?" keeps the index current, for tests: `interval` replaces
    /// `inspectionRefreshInterval`, and `runner` runs each background read of the journal instead of
    /// a thread of its own (it may run it later, or never; nil: a thread of its own).
    package func setBackgroundRefresh(interval: Duration, runner: (@Sendable (@escaping @Sendable () -> Void) -> Void)?) {
        refreshes.withLock {
            $0.interval = interval
            $0.runner = runner
        }
    }

    /// Whether the index is still the journal's table left in the file and checked lazily, not
    /// yet read into memory
    /// (for tests and benchmarks: see `DiskCacheIndex`).
    package var indexIsLazy: Bool { index.withLock { $0.isLazy } }

    /// Times the journal was read for changes (`refresh()`): for tests that prove a path touches no file.
    package var journalReads: Int { refreshes.withLock { $0.reads } }

    /// Starts a read of the journal on a thread of its own when one is due and none is running.
    func refreshInBackgroundIfDue() {
        let now = ContinuousClock.now
        let (due, runner) = refreshes.withLock { state -> (Bool, (@Sendable (@escaping @Sendable () -> Void) -> Void)?) in
            guard !readOnly, !state.running, now - state.lastRead >= state.interval else { return (false, nil) }
            state.running = true
            return (true, state.runner)
        }
        guard due else { return }
        let work: @Sendable () -> Void = { [self] in
            refresh()
            materializeIndex()
            refreshes.withLock { $0.running = false }
        }
        if let runner { return runner(work) }
        do {
            try OwnedThread.detached(work)
        } catch {
            // No thread now: the next due miss tries again (stores and reads still read the journal).
            refreshes.withLock { $0.running = false }
            logger.debug("disk cache: cannot start a thread to read the journal", metadata: ["code": "\(error.code)"])
        }
    }

    /// Reads what other processes appended to the journal (or the whole of a replaced one).
    func refresh() {
        guard !readOnly else { return }
        let now = ContinuousClock.now
        refreshes.withLock {
            $0.lastRead = now
            $0.reads += 1
        }
        switch journal.readNew() {
        case .appended(let records):
            guard records.count > 0 else { return }
            index.withLock { index in records.forEach { index.apply($0) } }
        case .replaced(let snapshot?):
            let fresh = Self.index(from: snapshot)
            index.withLock { $0 = fresh }
        case .replaced(nil):
            if let error = rebuildFromFolder() {
                logger.error("disk cache: cannot write the journal", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
            }
        }
    }

    /// The index of a journal file: its table, then the records after it.
    private static func index(from snapshot: DiskCacheJournal.Snapshot) -> DiskCacheIndex {
        var index = snapshot.index
        snapshot.tail.forEach { index.apply($0) }
        return index
    }

    /// Indexes the folder by listing it (one `fstatat` per entry: only when the journal is new,
    /// damaged or gone), oldest file first, and writes the journal anew.
    @discardableResult
    func rebuildFromFolder() -> DiskCacheError? {
        guard !readOnly && !inspectOnly else {
            _ = indexFromFolder()
            return nil
        }
        do {
            try journal.rewrite { _ in indexFromFolder() }
            return nil
        } catch {
            count { $0.writeFailures += 1 }
            return error
        }
    }

    /// Lists the folder into the index (oldest file first) and returns it.
    private func indexFromFolder() -> DiskCacheIndex {
        let scan = layout.scanEntries()
        for problem in scan.problems {
            logger.warning("disk cache: skipped", metadata: ["path": "\(problem.path)", "error": "\(problem.message)"])
        }
        let fresh = DiskCacheIndex(compacting: scan.entries.sorted { $0.modified < $1.modified }.map { ($0.key, $0.size) })
        index.withLock { $0 = fresh }
        return fresh
    }

    /// Rewrites the journal (the index's table, records of use as ranks) when more than 4,096
    /// records plus an eighth of the entries were appended after its table.
    func compactIfNeeded() {
        guard !inspectOnly, journal.recordCount > 4096 else { return }
        // A table still in the file is not read to be counted: a compacted table holds at most half
        // its slots, so this compacts no sooner than the exact count would; the next change (which
        // copies it) counts exactly.
        let live = index.withLock { $0.isLazy ? $0.slotCount / 2 : $0.count }
        guard journal.recordCount > 4096 + live / 8 else { return }
        do {
            try journal.rewrite { change in
                index.withLock { index in
                    if case .appended(let records) = change { records.forEach { index.apply($0) } }
                    index = DiskCacheIndex(compacting: index.byUse)
                    return index
                }
            }
        } catch {
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot rewrite the journal", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
        }
    }

    func forget(_ key: Hash128, journaled: Bool = false) {
        let known = index.withLock { $0.remove(key) != nil }
        if known || journaled { record([.init(key: key, size: 0, operation: .removed)]) }
    }

    /// Appends to the journal; a failure is logged, counted and returned (the entry files stay
    /// right: the journal is then behind until it is rebuilt or compacted).
    @discardableResult
    func record(_ records: [DiskCacheJournal.Record]) -> SystemError? {
        guard let failure = journal.append(records) else { return nil }
        reportJournalFailure(failure)
        return failure
    }

    func reportJournalFailure(_ failure: SystemError) {
        count { $0.writeFailures += 1 }
        logger.error("disk cache: cannot write the journal", metadata: ["path": "\(failure.path)", "error": "\(failure.message)"])
    }
}
