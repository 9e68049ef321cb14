#if canImport(Glibc)

extension FileSettingsStore {
    /// The stored values now, then again after each change another process (or this one) makes
    /// to the file, until the consumer stops iterating: the way a running app hears
    /// `imgpolicy settings set` at once. Consecutive equal results are not repeated; a file that
    /// cannot be read gives its error (and the next good version its values).
    ///
    /// The folder is watched with inotify, so an atomic replace is seen as well as a write in place
    /// or a removal; a thread of the stream's own waits for it, and ends (closing its descriptors)
    /// when the consumer stops. Linux only. When inotify cannot be had (descriptors exhausted), or
    /// the folder is removed, the stream yields the current values and finishes.
    ///
    /// ```swift
    /// for await values in store.changes() {
    ///     if case .success(let settings) = values { redecide(with: settings) }
    /// }
    /// ```
    public func changes() -> AsyncStream<Result<[String: SettingValue], DataFileError>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<[String: SettingValue], DataFileError>.self,
                                                            bufferingPolicy: .bufferingNewest(8))
        // A store with no location (no usable HOME) has nothing to watch: its path is not a real one.
        let watcher = isUnavailable ? nil : SettingsFileWatcher(path: path)
        let last = Locked(readResult())
        continuation.yield(last.withLock { $0 })
        guard let watcher else {
            continuation.finish()
            return stream
        }
        let started = watcher.start { [self] in
            let now = readResult()
            let isNew = last.withLock { last in
                defer { last = now }
                return last != now
            }
            if isNew { continuation.yield(now) }
        } ended: {
            continuation.finish()
        }
        guard started else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in watcher.stop() }
        return stream
    }

    private func readResult() -> Result<[String: SettingValue], DataFileError> {
        do { return .success(try storedValues()) } catch { return .failure(error) }
    }
}
#endif
import Support
