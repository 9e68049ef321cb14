import Support
import Logging

/// Runs decodes off the caller's thread on a bounded pool of threads of its own (a
/// `BlockingWorkPool`): at most `maximumConcurrentDecodes` at once (default: the number of cores),
/// the others waiting in order. Decoding is CPU-bound C code, so it never runs on Swift's
/// cooperative pool.
///
/// Cancellable: when the calling task is cancelled, `decode` throws `DecodingError` of kind
/// `.cancelled` at once and never returns the image, even if its decode was already running (that
/// decode finishes on its thread and is dropped); a decode that has not started is skipped.
/// Threads end when nothing waits, so the queue needs no shutdown.
///
/// ```swift
/// let queue = DecodingQueue()
/// let image = try await queue.decode(bytes, to: TargetSize(width: 600, height: 400))
/// ```
///
/// Thread safety: every method may be called from any thread or task at once.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public final class DecodingQueue: Sendable {
    /// The most decodes that run at once.
    public var maximumConcurrentDecodes: Int { threads.width }

    typealias Work = @Sendable ([UInt8], TargetSize?) throws(DecodingError) -> DecodedImage

    private let work: Work
    private let threads: BlockingWorkPool
    private let logger: Logger

    /// A queue decoding with `decoder`, at most `maximumConcurrentDecodes` at once (nil: the
    /// number of cores online).
    public convenience init(decoder: ImageDecoder = ImageDecoder(), maximumConcurrentDecodes: Int? = nil,
                            logger: Logger = .disabled) {
        self.init(maximumConcurrentDecodes: maximumConcurrentDecodes, logger: logger) { bytes, target throws(DecodingError) in
            try decoder.decode(bytes, to: target)
        }
    }

    /// A queue running `work` (the tests' stand-in for a decoder).
    init(maximumConcurrentDecodes: Int?, logger: Logger = .disabled, work: @escaping Work) {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        threads = BlockingWorkPool(label: "imgpolicy.decoder", width: maximumConcurrentDecodes ?? cores, logger: logger)
        self.logger = logger
        self.work = work
    }

    /// Decodes `bytes` downsampled to `target` on one of the queue's threads.
    public func decode(_ bytes: [UInt8], to target: TargetSize? = nil) async throws(DecodingError) -> DecodedImage {
        let job = Job(bytes: bytes, target: target)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DecodedImage, DecodingError>, Never>) in
                if job.attach(continuation) {
                    threads.submit { [self] in run(job) }
                } else {
                    continuation.resume(returning: .failure(DecodingError(kind: .cancelled)))
                }
            }
        } onCancel: {
            job.cancel()?.resume(returning: .failure(DecodingError(kind: .cancelled)))
        }
        return try result.get()
    }

    /// Jobs waiting for a thread (cancelled ones included until a thread passes them).
    var waitingCount: Int { threads.waitingCount }

    /// Runs one job on a pool thread: skipped when it was cancelled before it started.
    private func run(_ job: Job) {
        guard job.start() else { return }
        let result = Result { () throws(DecodingError) -> DecodedImage in try work(job.bytes, job.target) }
        if case .failure(let error) = result {
            logger.debug("decode failed", metadata: ["error": "\(error)", "bytes": "\(job.bytes.count)"])
        }
        job.finish()?.resume(returning: result)
    }
}

/// One decode's lifecycle: created → queued → running → finished, or cancelled at any point
/// before finished. Whoever moves it out of queued/running owns the continuation and resumes it.
final class Job: Sendable {
    typealias Continuation = CheckedContinuation<Result<DecodedImage, DecodingError>, Never>

    enum Phase {
        case created, queued(Continuation), running(Continuation), cancelled, finished
    }

    let bytes: [UInt8]
    let target: TargetSize?
    let phase = Locked(Phase.created)

    init(bytes: [UInt8], target: TargetSize?) {
        self.bytes = bytes
        self.target = target
    }

    /// Stores the continuation; false when the job was cancelled first.
    func attach(_ continuation: Continuation) -> Bool {
        phase.withLock { phase in
            guard case .created = phase else { return false }
            phase = .queued(continuation)
            return true
        }
    }

    /// queued → running; false when cancelled (the decode is skipped).
    func start() -> Bool {
        phase.withLock { phase in
            guard case .queued(let continuation) = phase else { return false }
            phase = .running(continuation)
            return true
        }
    }

    /// running → finished: the continuation to resume with the result, nil when cancelled meanwhile.
    func finish() -> Continuation? {
        phase.withLock { phase in
            guard case .running(let continuation) = phase else { return nil }
            phase = .finished
            return continuation
        }
    }

    /// → cancelled: the continuation to resume with `.cancelled`, when this call took it.
    func cancel() -> Continuation? {
        phase.withLock { phase in
            switch phase {
            case .created:
                phase = .cancelled
                return nil
            case .queued(let continuation), .running(let continuation):
                phase = .cancelled
                return continuation
            case .cancelled, .finished:
                return nil
            }
        }
    }
}
