/// How a rule that loads picks one rung of an item's ladder (docs/ladders.md): the narrowest rung
/// that covers the display width times a factor, or the narrowest rung of all; then, with caps,
/// the widest rung at or below that one that is at most so many pixels wide, so many bytes, or
/// arrives within so long at the measured rate.
///
/// In a policy file it is the rule's `"rung"`: `"smallest"`, or
/// `{"covering": 1.0, "maxWidth": 1280, "maxBytes": 150000, "within": 1500}` (`within` in
/// milliseconds), every member optional (`covering` is 1 when left out).
///
/// The rules for what an item does not say: without a display width, covering means the widest
/// rung (what loading the original means); a rung of unknown width covers nothing, except the
/// widest of an item, the full resolution, which covers every display and is wider than any
/// `maxWidth`; a cap on bytes or time never refuses a rung whose size the item does not give, and
/// `within` applies only to a measured link. When the caps refuse every rung, the narrowest is
/// loaded.
///
/// ```swift
/// let choice = RungChoice(covering: 1.0, maxBytes: 200_000)
/// ```
public struct RungChoice: Sendable, Hashable, CustomStringConvertible {
    /// The largest factor a display width may be multiplied by.
    public static let maximumFactor = 8.0
    /// The smallest factor (a twentieth of the display width).
    public static let minimumFactor = 0.05
    /// The largest `maxBytes` (1 TiB: far above any image).
    public static let maximumBytes = 1 << 40
    /// The longest `within` a policy may give (a minute).
    public static let maximumWithin: Duration = .seconds(60)

    /// What the choice starts from.
    public enum Target: Sendable, Hashable {
        /// The narrowest rung at least the display width × this factor wide (the widest when none
        /// is, or when the display width is not known).
        case covering(Double)
        /// The narrowest rung (low data, roaming).
        case smallest
    }

    /// What the choice starts from.
    public var target: Target
    /// The widest a loaded rung may be, in pixels; nil for no cap.
    public var maxWidth: Int?
    /// The most bytes a loaded rung may be (when the item says its size); nil for no cap.
    public var maxBytes: Int?
    /// The longest a loaded rung may take to arrive at the measured rate (when the item says its
    /// size and the link is measured); nil for no cap.
    public var within: Duration?

    /// `within` in whole milliseconds (as a policy file writes it); nil without it.
    public var withinMilliseconds: Int64? { within?.milliseconds }

    /// A choice of the narrowest rung covering the display width × `factor`, with optional caps.
    public init(covering factor: Double = 1, maxWidth: Int? = nil, maxBytes: Int? = nil, within: Duration? = nil) {
        self.target = .covering(factor)
        self.maxWidth = maxWidth
        self.maxBytes = maxBytes
        self.within = within
    }

    /// The choice of the narrowest rung.
    public static let smallest = RungChoice(target: .smallest)

    private init(target: Target) {
        self.target = target
    }

    /// Why the choice cannot be used, or nil: a factor outside ``minimumFactor``…``maximumFactor``, a cap
    /// below 1, a `within` outside (0, ``maximumWithin``].
    public var problem: String? {
        if case .covering(let factor) = target, !(factor >= Self.minimumFactor && factor <= Self.maximumFactor) {
            return "\"covering\" must be a factor from \(Self.minimumFactor) to \(Self.maximumFactor), found \(factor)"
        }
        if let maxWidth, !(1...ImageItem.maximumWidth).contains(maxWidth) {
            return "\"maxWidth\" must be from 1 to \(ImageItem.maximumWidth) pixels, found \(maxWidth)"
        }
        if let maxBytes, !(1...Self.maximumBytes).contains(maxBytes) {
            return "\"maxBytes\" must be from 1 to \(Self.maximumBytes), found \(maxBytes)"
        }
        // Whole milliseconds, as a policy file writes them (`policy show` writes them back).
        if let within, !(within >= .milliseconds(1) && within <= Self.maximumWithin && within == .milliseconds(within.milliseconds)) {
            return "\"within\" must be a whole number of milliseconds from 1 to 60000, found \(within.milliseconds) ms"
        }
        return nil
    }

    /// The index among `rungs` (narrowest first) that this choice loads for a display
    /// `displayWidth` pixels wide (nil: not known) on a link measured as `estimate` (nil: not
    /// measured). `rungs` is not empty.
    func index(among rungs: [RungCandidate], displayWidth: Int?, estimate: LinkEstimate?) -> Int {
        let last = rungs.count - 1
        let start: Int
        switch target {
        case .smallest:
            start = 0
        case .covering(let factor):
            if let displayWidth {
                let wanted = Int(min((Double(displayWidth) * factor).rounded(.up), Double(ImageItem.maximumWidth)))
                start = rungs.indices.first { rungs[$0].covers(wanted, isWidest: $0 == last) } ?? last
            } else {
                start = last
            }
        }
        for index in stride(from: start, through: 0, by: -1) where allows(rungs[index], isWidest: index == last, estimate: estimate) {
            return index
        }
        return 0
    }

    /// Whether the caps let `rung` be loaded.
    private func allows(_ rung: RungCandidate, isWidest: Bool, estimate: LinkEstimate?) -> Bool {
        if let maxWidth {
            guard let width = rung.width else { return !isWidest }
            if width > maxWidth { return false }
        }
        if let maxBytes, let bytes = rung.bytes, bytes > maxBytes { return false }
        if let within, let bytes = rung.bytes, let estimate {
            let seconds = Double(within.components.seconds) + Double(within.components.attoseconds) / 1e18
            if Double(bytes) > estimate.bytesPerSecond * seconds { return false }
        }
        return true
    }

    /// `covering 1.0× the display, at most 1280 px`, `narrowest of all`.
    public var description: String {
        var parts: [String] = []
        switch target {
        case .covering(let factor): parts.append("covering \(factor)× the display")
        case .smallest: parts.append("narrowest of all")
        }
        if let maxWidth { parts.append("at most \(maxWidth) px") }
        if let maxBytes { parts.append("at most \(maxBytes) bytes") }
        if let within { parts.append("within \(within.milliseconds) ms") }
        return parts.joined(separator: ", ")
    }
}
