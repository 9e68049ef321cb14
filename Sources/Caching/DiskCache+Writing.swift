import Support
import Logging
import Policy

import HTTPSemantics

/// The writing side: storing entries, refreshing their freshness after a 304, removing them,
/// and evicting the least recently used past the capacity.
extension DiskCache {
    /// Stores `bytes` for `url` atomically, without HTTP information (received now: fresh for the
    /// default lifetime), then evicts past `capacity`: `store(_:for:freshness:)` with nil, the
    /// outcome dropped (a body too large is not stored, nothing is evicted for it).
    /// - Throws: as `store(_:for:freshness:)`.
    public func store(_ bytes: [UInt8], for url: ImageURL) throws(DiskCacheError) {
        _ = try store(bytes, for: url, freshness: nil)
    }

    /// Stores `bytes` for `url` atomically with its HTTP `freshness`, then evicts past `capacity`.
    /// Without `freshness` the entry has no freshness record (format 1, as entries written before
    /// they kept one): fresh for the default lifetime from the time it was written.
    ///
    /// Returns `.stored`, or why nothing was written: `.tooLarge` for a body whose entry would be
    /// larger than `largestEntry` (nothing is evicted for it; counted in
    /// `counters.oversizedSkipped`); `.forbidden` when `freshness` says the response may not be
    /// stored (`no-store`, or a status other than 200 and 203): then any entry for `url` is
    /// removed too, since it describes an older response (counted in `counters.refusedNoStore`).
    /// - Throws: `DiskCacheError` naming the path when the file cannot be written (full disk,
    ///   immutable or missing folder, a file where `tmp/` or a shard should be), `.tooLarge` for a
    ///   URL longer than 1 MiB; the cache is unchanged then. Also when the entry cannot be recorded
    ///   in the journal (the error names the journal): the entry file is then removed, so that no
    ///   entry is on disk that the index does not show. Failures are also logged and counted.
    @discardableResult
    public func store(_ bytes: [UInt8], for url: ImageURL, freshness: HTTPFreshness?) throws(DiskCacheError) -> StoreOutcome {
        let urlBytes = Array(url.absoluteString.utf8)
        guard urlBytes.count <= DiskCacheEntry.largestURL else {
            count { $0.writeFailures += 1 }
            let error = DiskCacheError(path: folder, message: "the URL is \(urlBytes.count) bytes long; the cache stores URLs of at most \(DiskCacheEntry.largestURL) bytes", code: .tooLarge)
            logger.warning("disk cache: not stored", metadata: ["error": "\(error)"])
            throw error
        }
        guard !inspectOnly else { throw Self.lookedAtOnly(folder) }
        if let unwritable {
            // Nothing is created in a folder whose marker could not be written (a full disk, an
            // immutable folder): a shard made here would make it "not a cache" once there is room.
            count { $0.writeFailures += 1 }
            let error = DiskCacheError(path: unwritable.path, message: "not stored: the cache folder is only read, its marker could not be written: \(unwritable.message)")
            logger.error("disk cache: cannot store an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error
        }
        let key = Hash128(of: url.absoluteString)
        if let freshness, !freshness.isStorable {
            count { $0.refusedNoStore += 1 }
            logger.debug("disk cache: not stored: the response forbids it", metadata: ["url": "\(url)", "status": "\(freshness.status)", "no-store": "\(freshness.noStore)"])
            if containsImage(at: url) { remove(url) }
            return .forbidden
        }
        let file = DiskCacheEntry.encode(body: bytes, url: urlBytes, freshness: freshness)
        let size = file.count
        guard size <= largestEntry else {
            count { $0.oversizedSkipped += 1 }
            logger.debug("disk cache: not stored: larger than the largest entry", metadata: ["url": "\(url)", "bytes": "\(size)", "largest": "\(largestEntry)"])
            return .tooLarge
        }
        do {
            try layout.writeEntry(file, key: key)
        } catch {
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot store an entry", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error
        }
        try recordStored(key, size: size)
        return .stored
    }

    /// Indexes and journals a new entry file, then evicts past the capacity. When the record
    /// cannot be appended, the entry file is removed and the failure thrown.
    private func recordStored(_ key: Hash128, size: Int) throws(DiskCacheError) {
        refresh()  // other processes' writes and uses count for the capacity and the order
        trimPartials(keeping: nil, adding: size)  // partial bodies go before any entry
        let partialBytes = partials.withLock { $0.bytes }
        let victims: [(key: Hash128, size: Int)] = index.withLock { index in
            index.store(key, size: size)
            return evictionVictims(&index, keeping: key, partialBytes: partialBytes)
        }
        let failure = record([.init(key: key, size: size, operation: .stored)] + victims.map { .init(key: $0.key, size: 0, operation: .removed) })
        evict(victims)
        if let failure {
            // Not indexed: the entry file goes too, so that no entry is on disk that no index shows.
            index.withLock { _ = $0.remove(key) }
            if let removal = layout.removeEntry(key) { reportRemovalFailure(removal) }
            throw DiskCacheError(path: failure.path, message: "\(failure.message) (the entry \(layout.entryPath(key)) is not kept)")
        }
        compactIfNeeded()
    }

    /// Replaces the freshness of the entry for `url` (after a `304 Not Modified`: see
    /// `HTTPFreshness.refreshed(byNotModified:requestedAt:receivedAt:)`) without rewriting its
    /// body: the new record goes into the entry's spare slot, in place, under `flock`; a crash
    /// in the middle leaves the previous record (`DiskCacheEntry`). A format-1 entry, or a record
    /// too long for the entry's slots, is rewritten whole (atomically, as `store`).
    ///
    /// Returns whether the entry holds `freshness` now: false when there is no intact entry for
    /// `url`, or when `freshness` forbids storing (`no-store` in the 304): then the entry is removed.
    /// - Throws: `DiskCacheError` naming the entry when it cannot be written.
    @discardableResult
    public func refreshFreshness(of url: ImageURL, to freshness: HTTPFreshness) throws(DiskCacheError) -> Bool {
        let key = Hash128(of: url.absoluteString)
        guard freshness.isStorable else {
            count { $0.refusedNoStore += 1 }
            remove(url)
            return false
        }
        let urlBytes = Array(url.absoluteString.utf8)
        switch layout.rewriteFreshness(DiskCacheEntry.encodeFreshness(freshness), key: key, url: urlBytes) {
        case .done, .withoutRecord:
            return true
        case .missing:
            forget(key)
            return false
        case .damaged:
            _ = storedImage(for: url)  // removes it, logged and counted
            return false
        case .needsWholeRewrite:
            guard let stored = storedImage(for: url) else { return false }
            return try store(stored.bytes, for: url, freshness: freshness) == .stored
        case .failed(let error):
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot refresh an entry's freshness", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error.cacheError
        }
    }

    /// After a `304 Not Modified` carrying `headers` for a request made with the stored entry's
    /// `conditionalHeaders`: the stored bytes with their renewed freshness (already written), or
    /// nil when there is no entry for `url` or the 304 does not match it (its validators differ):
    /// the caller then fetches `url` again without conditions. Never an empty image.
    /// - Throws: as `refreshFreshness(of:to:)`; the bytes are good all the same, but the caller
    ///   learns that the renewed freshness is not on disk.
    public func revalidated(_ url: ImageURL, notModified headers: [(name: String, value: String)],
                            requestedAt: HTTPDate? = nil, receivedAt: HTTPDate) throws(DiskCacheError) -> StoredImage? {
        guard let stored = storedImage(for: url),
              let renewed = stored.freshness.refreshed(byNotModified: headers, requestedAt: requestedAt, receivedAt: receivedAt) else { return nil }
        try refreshFreshness(of: url, to: renewed)
        return StoredImage(bytes: stored.bytes, freshness: renewed, hasFreshnessRecord: renewed.isStorable)
    }

    /// Removes the entry for `url` (nothing, on a cache opened with `inspecting`).
    public func remove(_ url: ImageURL) {
        guard !inspectOnly else { return }
        let key = Hash128(of: url.absoluteString)
        if let failure = layout.removeEntry(key) { reportRemovalFailure(failure) }
        forget(key, journaled: true)
    }

    /// Removes every entry, every partial body and every stale temporary file, never anything else: only the cache's
    /// own names, in real (not symbolic-link) shard folders. Returns what was removed and every
    /// failure (each also logged and counted); what could not be removed stays in the index.
    @discardableResult
    public func removeAll() -> ClearReport {
        guard !inspectOnly else { return ClearReport(removed: 0, temporariesRemoved: 0, failures: [Self.lookedAtOnly(folder)]) }
        let swept = sweep()
        let removal = layout.removeAllEntries()
        for failure in removal.failures { reportRemovalFailure(failure) }
        scanPartials()  // what other processes saved too
        for key in partials.withLock({ Array($0.byKey.keys) }) { removePartial(key) }
        var failures = (swept.failures + removal.failures).map { DiskCacheError(path: $0.path, message: $0.message, code: .removeFailed) }
        if let error = rebuildFromFolder() { failures.append(error) }
        return ClearReport(removed: removal.removed, temporariesRemoved: swept.removed, failures: failures)
    }

    /// The failure of a write asked of a cache opened to be looked at only.
    private static func lookedAtOnly(_ folder: String) -> DiskCacheError {
        DiskCacheError(path: folder, message: "the cache was opened to be looked at only (DiskCache.inspecting): nothing is written")
    }

    func evictionVictims(_ index: inout DiskCacheIndex, keeping key: Hash128?, partialBytes: Int) -> [(key: Hash128, size: Int)] {
        let held = counts.withLock { $0.temporaryBytesHeld } + partialBytes
        guard index.totalBytes + held > capacity else { return [] }
        var victims: [(key: Hash128, size: Int)] = []
        let target = capacity / 10 * 9
        for victim in index.byUse where victim.key != key {
            guard index.totalBytes + held > target else { break }
            index.remove(victim.key)
            victims.append(victim)
        }
        return victims
    }

    func evict(_ victims: [(key: Hash128, size: Int)]) {
        guard !victims.isEmpty else { return }
        for victim in victims {
            if let failure = layout.removeEntry(victim.key) { reportRemovalFailure(failure) }
        }
        count { $0.evictions += victims.count }
        logger.info("disk cache: evicted least recently used entries", metadata: [
            "folder": "\(folder)", "entries": "\(victims.count)", "bytes": "\(victims.reduce(0) { $0 + $1.size })",
        ])
    }
}
