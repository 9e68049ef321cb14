import Logging
import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics
import Support

/// Decides with a policy and carries the decision out with a pipeline: the piece an app builds
/// once and gives to its slots.
///
/// The policy asks the pipeline's real caches what is cached. Offline, nothing touches the
/// network: a decision to show a cached variant is read from the caches only. When that cached
/// variant proves unreadable (damaged, evicted, or removed by another process meanwhile), the
/// loader decides again with the cache as it now is: on Wi-Fi it loads the original, offline it
/// shows the cached thumbnail or the placeholder. An error says "offline" only when the network
/// is offline.
///
/// ```swift
/// let loader = ImageLoader(policy: .default, reachability: try LinuxReachability(),  // import LinuxNetwork
///                          settings: FileSettingsStore(path: settingsPath), pipeline: pipeline)
/// let slot = ImageSlot(loader: loader) { event in print(event) }
/// slot.load(item)
/// ```
///
/// In use: the `Fetch` guide “Getting Started”.
public struct ImageLoader: Sendable {
    /// The policy.
    public var policy: ImagePolicy
    /// Where the network state comes from.
    public var reachability: any ReachabilityProviding
    /// Where the policy's settings come from.
    public var settings: any SettingsStore
    /// Loads what was decided; also answers "is it cached?".
    public var pipeline: ImagePipeline
    /// The priority this loader's loads go to the pipeline at (nil: a new `.visible` one each);
    /// set on a copy by `load(_:decision:priority:)`.
    var requestPriority: RequestPriority?
    /// The width in pixels (points × scale) of where the image is shown, which `decide(_:)` and
    /// the decisions made again while loading use (nil, the default: unknown). Slots and lists
    /// set it on their copy of the loader (`ImageSlot.displayWidth`, `ImageList.setDisplayWidth(_:)`).
    public var displayWidth: Int?
    /// Where decisions made again (a cached variant that proved unreadable) are reported.
    public var logger: Logger
    /// Counts every load's cost (nil: nothing is counted). See `DataUsageRecorder`.
    public var usage: DataUsageRecorder?
    /// Closed when the `ImageSystem` that made this loader is shut down (nil: a loader made by
    /// hand, whose parts shut down on their own).
    package var gate: LoadGate?

    /// How many times one load decides again before it reports the cached copy as lost.
    static let maxRedecisions = 3

    /// Creates a loader.
    public init(policy: ImagePolicy, reachability: any ReachabilityProviding, settings: any SettingsStore,
                pipeline: ImagePipeline, usage: DataUsageRecorder? = nil, logger: Logger = .disabled) {
        self.usage = usage
        // Background revalidations the loads start are counted by the same recorder.
        if let usage, pipeline.backgroundUsage == nil { pipeline.backgroundUsage = usage }
        self.policy = policy
        self.reachability = reachability
        self.settings = settings
        self.pipeline = pipeline
        self.logger = logger
    }

    /// The decision for `item` now.
    /// - Throws: the settings store's error (a value of the wrong type, an unreadable file).
    public func decide(_ item: ImageItem) throws(DataFileError) -> Decision {
        try decide(item, displayWidth: displayWidth)
    }

    /// The decision for `item` shown `displayWidth` pixels wide (points × scale; nil: unknown).
    /// With the item's `thumbnailWidth` it tells the policy whether the thumbnail covers the
    /// display (`ImageItem.thumbnailCovers(displayWidth:)`), for policies that test
    /// `thumbnailCoversDisplay` (the bundled `thumbnail-when-enough`).
    ///
    /// ```swift
    /// let decision = try loader.decide(item, displayWidth: 300 * 2)   // a 300-point cell at scale 2
    /// ```
    /// - Throws: the settings store's error (a value of the wrong type, an unreadable file).
    public func decide(_ item: ImageItem, displayWidth: Int?) throws(DataFileError) -> Decision {
        let network = reachability.currentState
        // `cache:` asks about each rung of a ladder when the policy chooses rungs.
        return policy.decide(item, network: network, settings: try policy.resolveSettings(from: settings),
                             cache: pipeline, displayWidth: displayWidth, estimate: pipeline.linkEstimate(for: network))
    }

    /// The event every load of `item` ends with once the loader's `ImageSystem` was shut down; nil
    /// while it runs. Checked before anything is decided, so that nothing is read any more (the
    /// settings file, the cache's index): the decision is a placeholder whose rule is `shutdown`.
    package func shutdownEvent(for item: ImageItem) -> SlotEvent? {
        guard let gate, gate.isClosed else { return nil }
        let none = Decision(action: .placeholder, rule: "shutdown", reason: "the image system was shut down", network: NetworkState(.unknown))
        return .failed(none, error: FetchError(url: item.original, code: .alreadyShutdown), fallback: nil)
    }

    /// Carries out `decision` with the pipeline (see `ImagePipeline.load(_:decision:)`); a "show
    /// cached" decision whose variant cannot be read any more is made again first. The event is
    /// counted by `usage`, once.
    ///
    /// A loader taken from an `ImageSystem` (module `Fetch`) that was shut down reports
    /// `.failed(decision, error:, fallback: nil)` at once, the error's code
    /// `FetchError.Code.alreadyShutdown` (its URL the decided one, else the item's original).
    public func load(_ item: ImageItem, decision: Decision) async -> SlotEvent {
        if let gate, gate.isClosed {
            return .failed(decision, error: FetchError(url: decision.url ?? item.original, code: .alreadyShutdown), fallback: nil)
        }
        let event = await produceEvent(item, decision: decision)
        usage?.record(event, for: item, cache: pipeline)
        return event
    }

    private func produceEvent(_ item: ImageItem, decision: Decision) async -> SlotEvent {
        var decision = decision
        for _ in 0..<Self.maxRedecisions {
            guard case .showCached(let variant, let url) = decision.action else { break }
            if let image = await pipeline.cachedImage(for: url, revalidatingOn: decision.network, variant: decision.variant) {
                return .imageReady(decision, variant: variant, image: image)
            }
            if Task.isCancelled {
                return .failed(decision, error: FetchError(url: url, code: .cancelled), fallback: nil)
            }
            logger.notice("cached image unreadable; deciding again", metadata: ["url": "\(url)", "rule": "\(decision.rule)"])
            do throws(DataFileError) {
                decision = try decide(item)
            } catch {
                return .decisionFailed(error)
            }
        }
        return await pipeline.load(item, decision: decision, priority: requestPriority)
    }
}

/// What a slot reports.
///
/// In use: the `Fetch` guide “Getting Started”.
public enum SlotEvent: Sendable {
    /// The placeholder is shown (the decision said so).
    case placeholder(Decision)
    /// The image is ready: the variant, its bytes and where they came from.
    case imageReady(Decision, variant: Variant, image: FetchedImage)
    /// Loading failed: the error, then the widest cached image of the item narrower than the one
    /// that failed (an item without a ladder: its cached thumbnail) to show if there is one (nil:
    /// show the placeholder).
    case failed(Decision, error: FetchError, fallback: FetchedImage?)
    /// The decision itself failed (the settings could not be read): show the placeholder.
    case decisionFailed(DataFileError)
}
