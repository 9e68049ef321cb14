import Policy
import HTTPSemantics
import Support

/// Partial bodies: what an interrupted transfer received, kept in `partial/` so that the next
/// request for the URL asks only for the rest (`PartialBody.resumeHeaders`).
///
/// - **Safe against a crash.** A partial is saved as a temporary file, synced, then renamed into
///   place; an append writes checked chunks under `flock`, then syncs. A file torn by a crash
///   (`kill -9`, a power cut) never serves a byte that failed its check: a damaged header
///   discards the file, a torn last chunk is cut off (`DiskCachePartialFile`).
/// - **Bounded.** At most `PartialLimits.largest` bytes each (a longer body keeps its first
///   bytes), `PartialLimits.totalBytes` in all (the oldest go first), and each expires
///   `PartialLimits.lifetime` seconds after its last write (removed when next read, and when a
///   cache opens). Partial bytes count against the cache's `capacity`: past it, the oldest
///   partials are evicted before any entry.
/// - **Never followed.** A FIFO, device, socket or symbolic link under a partial's name is
///   removed unopened, never read; a `partial` folder that is a symbolic link is never entered.
extension DiskCache {
    /// How much of interrupted transfers is kept.
    public struct PartialLimits: Sendable, Equatable {
        /// Fewer bytes than this are not worth keeping (64 KiB by default).
        public var minimumBytes: Int
        /// The most bytes kept of one body (8 MiB by default; never more than the cache's
        /// `largestEntry`).
        public var largest: Int
        /// The most bytes of all partial bodies together (32 MiB by default).
        public var totalBytes: Int
        /// Seconds after its last write a partial body is discarded (1 day by default).
        public var lifetime: Int64

        /// Limits with the documented defaults unless given.
        public init(minimumBytes: Int = 64 << 10, largest: Int = 8 << 20, totalBytes: Int = 32 << 20, lifetime: Int64 = 86_400) {
            self.minimumBytes = max(1, minimumBytes)
            self.largest = max(0, largest)
            self.totalBytes = max(0, totalBytes)
            self.lifetime = max(0, lifetime)
        }

        /// 64 KiB at least, 8 MiB each, 32 MiB in all, for 1 day.
        public static let `default` = PartialLimits()
        /// Nothing is kept.
        public static let none = PartialLimits(largest: 0, totalBytes: 0)
    }

    /// Partial bodies and their bytes, as this process last saw them (read when the cache opened,
    /// kept up to date by this process's own saves, appends and removals).
    public var partialStatistics: Holdings {
        partials.withLock { Holdings(count: $0.byKey.count, bytes: $0.bytes) }
    }

    /// Keeps the first bytes of `url`'s body, received before its transfer stopped, with the
    /// `validator` they belong to (a strong `ETag`, else `Last-Modified`: see
    /// `HTTPFreshness.rangeValidator`) and the whole body's `totalLength`. Replaces any partial
    /// body for `url`.
    ///
    /// Returns false when nothing was kept: fewer than `partialLimits.minimumBytes` bytes, no
    /// validator (or one longer than 1 KiB, or with a line break), a `totalLength` not above the
    /// bytes given, or a body larger than the cache's largest entry (it could never be stored).
    /// More than `partialLimits.largest` bytes: the first ones are kept.
    /// - Throws: `DiskCacheError` naming the path when the file cannot be written (nothing is
    ///   left half-written).
    @discardableResult
    public func savePartial(_ bytes: [UInt8], for url: ImageURL, validator: String, totalLength: Int) throws(DiskCacheError) -> Bool {
        let urlBytes = Array(url.absoluteString.utf8)
        let validatorBytes = Array(validator.utf8)
        let kept = min(bytes.count, partialLimits.largest, partialLimits.totalBytes)
        // Nothing is created in a folder whose marker could not be written (see `store`).
        guard !readOnly, bytes.count >= partialLimits.minimumBytes, kept > 0, totalLength > bytes.count,
              !validatorBytes.isEmpty, validatorBytes.count <= DiskCachePartialFile.longestValidator,
              !validatorBytes.contains(where: { $0 < 0x20 || $0 == 0x7F }),
              urlBytes.count <= DiskCacheEntry.largestURL,
              DiskCacheEntry.headerSize + urlBytes.count + totalLength <= largestEntry else {
            logger.debug("disk cache: partial body not kept", metadata: ["url": "\(url)", "bytes": "\(bytes.count)", "total": "\(totalLength)"])
            return false
        }
        let key = Hash128(of: url.absoluteString)
        let file = DiskCachePartialFile.header(totalLength: totalLength, validator: validatorBytes, url: urlBytes)
            + DiskCachePartialFile.chunks(bytes[..<kept], offset: 0)
        do {
            try layout.writePartial(file, key: key)
        } catch {
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot save a partial body", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error
        }
        partials.withLock { $0.byKey[key] = .init(size: file.count, modified: HTTPDate.now().secondsSince1970) }
        makeRoomForPartials(keeping: key)
        return true
    }

    /// Appends `bytes` to `url`'s partial body when it holds exactly `offset` bytes (the caller
    /// resumed from `partial(for:)` and was interrupted again), up to `partialLimits.largest`.
    /// Returns false when there is no such partial body (none, expired, another length): nothing
    /// is written then.
    /// - Throws: `DiskCacheError` naming the path when the file cannot be written.
    @discardableResult
    public func appendPartial(_ bytes: [UInt8], for url: ImageURL, at offset: Int) throws(DiskCacheError) -> Bool {
        guard !bytes.isEmpty, partial(for: url)?.offset == offset else { return false }
        let key = Hash128(of: url.absoluteString)
        let urlBytes = Array(url.absoluteString.utf8)
        let largest = partialLimits.largest
        let result = layout.appendPartial(key) { file in
            guard let contents = DiskCachePartialFile.contents(of: file, for: urlBytes), contents.body.count == offset else { return nil }
            let room = min(largest, contents.totalLength) - offset
            guard room > 0 else { return nil }
            return (contents.end, DiskCachePartialFile.chunks(bytes.prefix(room), offset: offset))
        }
        switch result {
        case .success(nil):
            return false
        case .success(let size?):
            partials.withLock { $0.byKey[key] = .init(size: size, modified: HTTPDate.now().secondsSince1970) }
            makeRoomForPartials(keeping: key)
            return true
        case .failure(let error):
            count { $0.writeFailures += 1 }
            logger.error("disk cache: cannot append to a partial body", metadata: ["path": "\(error.path)", "error": "\(error.message)", "url": "\(url)"])
            throw error.cacheError
        }
    }

    /// The partial body kept for `url`: its checked first bytes, validator and total length; nil
    /// when there is none. One that expired, is damaged, or is not a regular file is removed
    /// (logged and counted in `counters.partialsRemoved`).
    public func partial(for url: ImageURL) -> PartialBody? {
        let key = Hash128(of: url.absoluteString)
        switch layout.readPartial(key) {
        case .missing:
            partials.withLock { _ = $0.byKey.removeValue(forKey: key) }
            return nil
        case .failed(let error):
            logger.warning("disk cache: cannot read a partial body", metadata: ["path": "\(error.path)", "error": "\(error.message)"])
            return nil
        case .notRegular(let kind, let removal):
            count { $0.partialsRemoved += 1 }
            logger.warning("disk cache: removed \(kind) found in place of a partial body", metadata: ["path": "\(layout.partialPath(key))", "url": "\(url)"])
            if let removal { reportRemovalFailure(removal) }
            partials.withLock { _ = $0.byKey.removeValue(forKey: key) }
            return nil
        case .bytes(let file, let modified):
            let expired = Saturating.add(modified, partialLimits.lifetime) <= HTTPDate.now().secondsSince1970
            guard !expired, let contents = DiskCachePartialFile.contents(of: file, for: Array(url.absoluteString.utf8)) else {
                logger.info("disk cache: removed a partial body", metadata: ["path": "\(layout.partialPath(key))", "url": "\(url)",
                                                                              "why": "\(expired ? "expired" : "damaged")"])
                count { $0.partialsRemoved += 1 }
                removePartial(key)
                return nil
            }
            if contents.torn {
                logger.info("disk cache: a partial body has a torn end (not served)", metadata: ["path": "\(layout.partialPath(key))", "url": "\(url)"])
            }
            partials.withLock { $0.byKey[key] = .init(size: file.count, modified: modified) }
            return PartialBody(bytes: contents.body, validator: contents.validator, totalLength: contents.totalLength)
        }
    }

    /// After a `206 Partial Content` that brought `rest` (the bytes from the partial body's
    /// offset to the end): stores the whole body as a normal entry with `freshness` (a 206
    /// status in it counts as 200) and removes the partial body. Returns the whole body, or nil
    /// when it does not add up (no partial body, or its bytes plus `rest` are not its total
    /// length): then the partial body is discarded and the caller fetches the URL again.
    /// - Throws: as `store(_:for:freshness:)`; the partial body is removed all the same.
    public func completePartial(for url: ImageURL, rest: [UInt8], freshness: HTTPFreshness) throws(DiskCacheError) -> [UInt8]? {
        defer { discardPartial(for: url) }
        guard let partial = partial(for: url), partial.bytes.count + rest.count == partial.totalLength else { return nil }
        var whole = freshness
        if whole.status == 206 { whole.status = 200 }
        let body = partial.bytes + rest
        try store(body, for: url, freshness: whole)
        return body
    }

    /// Removes `url`'s partial body (after a 200 that sent the whole body again, a validator
    /// that no longer matches, or a completed transfer).
    public func discardPartial(for url: ImageURL) {
        removePartial(Hash128(of: url.absoluteString))
    }

    // MARK: - Upkeep

    func removePartial(_ key: Hash128) {
        if let failure = layout.removePartial(key) { reportRemovalFailure(failure) }
        partials.withLock { _ = $0.byKey.removeValue(forKey: key) }
    }

    /// Lists `partial/` (when the cache opens or is cleared): removes what expired and what is
    /// not a regular file, and counts the rest.
    func scanPartials() {
        let scan = layout.scanPartials()
        for failure in scan.failures { reportRemovalFailure(failure) }
        let now = HTTPDate.now().secondsSince1970
        var expired: [Hash128] = []
        var known = DiskCachePartials()
        for partial in scan.partials {
            if Saturating.add(partial.modified, partialLimits.lifetime) <= now {
                expired.append(partial.key)
            } else {
                known.byKey[partial.key] = .init(size: partial.size, modified: partial.modified)
            }
        }
        partials.withLock { $0 = known }
        for key in expired { removePartial(key) }
        count { $0.partialsRemoved += expired.count + scan.removed }
        if !expired.isEmpty || scan.removed > 0 {
            logger.info("disk cache: removed expired or unusable partial bodies", metadata: ["folder": "\(folder)/partial", "count": "\(expired.count + scan.removed)"])
        }
    }

    /// Keeps the partial bodies within `partialLimits.totalBytes`, and the cache within its
    /// capacity: the oldest partial bodies (but `keeping`) go first, then entries (least recently used).
    func makeRoomForPartials(keeping key: Hash128) {
        trimPartials(keeping: key, adding: 0)
        refresh()
        let partialBytes = partials.withLock { $0.bytes }
        let victims = index.withLock { evictionVictims(&$0, keeping: nil, partialBytes: partialBytes) }
        guard !victims.isEmpty else { return }
        record(victims.map { .init(key: $0.key, size: 0, operation: .removed) })
        evict(victims)
    }

    /// Removes the oldest partial bodies (but `keeping`) while they exceed
    /// `partialLimits.totalBytes`, or while entries (plus `adding` bytes about to be stored),
    /// temporaries and partials exceed the capacity (then down to 90 % of it).
    func trimPartials(keeping: Hash128?, adding: Int) {
        let entryBytes = index.withLock { $0.totalBytes } + adding + counts.withLock { $0.temporaryBytesHeld }
        let victims: [Hash128] = partials.withLock { partials in
            var bytes = partials.bytes
            let overCapacity = entryBytes + bytes > capacity
            let target = overCapacity ? max(0, capacity / 10 * 9 - entryBytes) : partialLimits.totalBytes
            guard bytes > min(target, partialLimits.totalBytes) || overCapacity else { return [] }
            var victims: [Hash128] = []
            for candidate in partials.oldestFirst where candidate != keeping {
                guard bytes > min(target, partialLimits.totalBytes) else { break }
                bytes -= partials.byKey[candidate]?.size ?? 0
                victims.append(candidate)
            }
            return victims
        }
        guard !victims.isEmpty else { return }
        for victim in victims { removePartial(victim) }
        count { $0.partialsRemoved += victims.count }
        logger.info("disk cache: evicted the oldest partial bodies", metadata: ["folder": "\(folder)/partial", "count": "\(victims.count)"])
    }
}
