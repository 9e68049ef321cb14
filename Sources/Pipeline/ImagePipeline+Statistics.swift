import Caching

extension ImagePipeline {
    /// Every read-out of a pipeline in one value, taken at one call: loads and their waiters,
    /// downloads, disk writes, background revalidations, resumed downloads, and entries discarded
    /// because they did not decode. For diagnostics, tests and benchmarks (`pipeline.statistics`).
    ///
    /// The counters are read under the pipeline's lock (the write queue's under its own), so a
    /// value is consistent within each group, not across groups while loads run.
    public struct Statistics: Sendable {
        /// Loads in flight (URLs being loaded, each shared by its waiters).
        public var inFlight: Int
        /// Calls waiting for a load in flight.
        public var waiters: Int
        /// Downloads started since the pipeline was made.
        public var downloads: Int
        /// Disk writes queued or running.
        public var pendingDiskWrites: Int
        /// Disk writes completed.
        public var diskWritesCompleted: Int
        /// Disk writes that failed.
        public var diskWriteFailures: Int
        /// Disk writes dropped because the queue was full (`DiskWritePolicy.dropWhenFull`).
        public var diskWritesDropped: Int
        /// The disk writes that failed, one per distinct message (the first 100 messages): the
        /// first failure with that message (it names the path) and how many writes failed so.
        public var diskWriteFailureCauses: [DiskWriteFailure]
        /// Background revalidations of stale entries: started, answered 304, answered 200, failed.
        public var revalidation: RevalidationStatistics
        /// Downloads completed by resuming a partial body, and the bytes not downloaded again.
        public var resume: ResumeStatistics
        /// Entries removed by `discardUndecodable(_:)`.
        public var undecodableDiscarded: Int

        /// Whether no call is running and every load has ended (no load in flight, no waiter).
        public var isIdle: Bool { inFlight == 0 && waiters == 0 }
    }

    /// A cause of failed disk writes: its first failure and how many writes failed so.
    public struct DiskWriteFailure: Sendable {
        /// The first failure with this message (it names the path).
        public var error: DiskCacheError
        /// How many writes failed with this message.
        public var occurrences: Int
    }
}
