import Policy
import Caching
import HTTPSemantics
import Support

/// What loading images cost and saved: bytes and images by network link, variant and source, and
/// the originals the policy held back. A value: add two together, keep one per day.
///
/// Every load an `ImageLoader` carries out adds one image to one `Key`: the link the decision was
/// made on (`Link`: the kind, with expensive and roaming apart), the variant shown, and where its
/// bytes came from (network, disk or memory). Only `.network` bytes were downloaded; disk and
/// memory bytes were read from the caches instead.
///
/// ```swift
/// let usage = recorder.usage
/// let cellular = usage.downloadedBytes { $0.kind == .cellular }          // every cellular link
/// let held = usage.originalsNotDownloaded.values.reduce(0, +)
/// if let each = usage.averageOriginalBytes {
///     print("\(cellular) bytes on cellular, about \(usage.estimatedSavedBytes(perOriginal: each)) saved")
/// }
/// ```
///
/// Counts never overflow: every sum in memory saturates at `Int.max`. What the ledger reads and
/// writes stays within `maximumCount` (2^53 − 1): a larger value, day or ledger total is refused
/// as damaged, naming the file, line and key, so no printed figure is ever a saturated one.
public struct DataUsage: Sendable, Hashable {
    /// The network link a decision was made on: its kind, and whether it was expensive or
    /// roaming (kept apart: a roaming byte costs far more than a home one).
    public struct Link: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The kind of link.
        public var kind: NetworkKind
        /// Metered (cellular, a hotspot). Always true when roaming.
        public var isExpensive: Bool
        /// A modem on a foreign network.
        public var isRoaming: Bool

        /// Creates a link; roaming implies expensive.
        public init(_ kind: NetworkKind, isExpensive: Bool = false, isRoaming: Bool = false) {
            self.kind = kind
            self.isExpensive = isExpensive || isRoaming
            self.isRoaming = isRoaming
        }

        /// The link of a network state (constrained and captive are not kept).
        public init(_ state: NetworkState) {
            self.init(state.kind, isExpensive: state.isExpensive, isRoaming: state.isRoaming)
        }

        /// Parses `kind`, `kind,expensive` or `kind,roaming` (the form `description` writes).
        public init?(parsing text: String) {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard let first = parts.first, let kind = NetworkKind(rawValue: String(first)), parts.count <= 2 else { return nil }
            switch parts.count == 2 ? String(parts[1]) : nil {
            case nil: self.init(kind)
            case "expensive": self.init(kind, isExpensive: true)
            case "roaming": self.init(kind, isRoaming: true)
            default: return nil
            }
        }

        /// `cellular`, `cellular,expensive` or `cellular,roaming` (roaming implies expensive).
        public var description: String {
            kind.rawValue + (isRoaming ? ",roaming" : isExpensive ? ",expensive" : "")
        }

        /// 0 home, 1 expensive, 2 roaming.
        var cost: Int { isRoaming ? 2 : isExpensive ? 1 : 0 }

        /// Ordered by kind (`wifi`, `cellular`, `wired`, `offline`, `unknown`), then cost.
        public static func < (lhs: Link, rhs: Link) -> Bool {
            (lhs.kind.order, lhs.cost) < (rhs.kind.order, rhs.cost)
        }
    }

    /// Where one image's cost is counted: the link, the variant and the source of the bytes.
    public struct Key: Sendable, Hashable {
        /// The link the decision was made on.
        public var link: Link
        /// The variant shown.
        public var variant: Variant
        /// Where the bytes came from.
        public var source: ImageSource
        /// The width in pixels of the image shown, when the item says it (a rung of a ladder, or
        /// an original or thumbnail of known width); nil when unknown.
        public var width: Int?

        /// Creates a key.
        public init(link: Link, variant: Variant, source: ImageSource, width: Int? = nil) {
            self.link = link
            self.variant = variant
            self.source = source
            self.width = width
        }
    }

    /// Bytes and images (a transfer for the network, a cache read for disk and memory).
    public struct Amount: Sendable, Hashable {
        /// Bytes of image files; for the network, the bytes received for them (a resumed download
        /// counts the rest it received: the part it kept was counted when it arrived).
        public var bytes: Int
        /// Images loaded.
        public var transfers: Int

        /// Creates an amount; negative values count as 0.
        public init(bytes: Int = 0, transfers: Int = 0) {
            self.bytes = max(0, bytes)
            self.transfers = max(0, transfers)
        }

        /// The sum, saturating at `Int.max`.
        public static func + (lhs: Amount, rhs: Amount) -> Amount {
            Amount(bytes: saturatingSum(lhs.bytes, rhs.bytes), transfers: saturatingSum(lhs.transfers, rhs.transfers))
        }

        /// Adds `rhs`, saturating at `Int.max`.
        public static func += (lhs: inout Amount, rhs: Amount) { lhs = lhs + rhs }
    }

    /// Every image loaded, by link, variant and source.
    public private(set) var amounts: [Key: Amount]
    /// Originals not downloaded because of the policy, by link: a decision showed the thumbnail
    /// (loaded or cached) or the placeholder while the item's original was not cached. Offline
    /// and captive links count none: nothing could have been downloaded there.
    public private(set) var originalsNotDownloaded: [Link: Int]
    /// Attempts made again after transient failures, by link (a download retried twice counts
    /// 2, whether it then succeeded or failed).
    public private(set) var retries: [Link: Int]
    /// Bytes not downloaded again thanks to resuming, by link: the part of each resumed download
    /// kept from an earlier, interrupted transfer (measured, not estimated).
    public private(set) var resumedBytes: [Link: Int]
    /// Body bytes received by attempts that failed or were cancelled, by link: on the network
    /// all the same, but for no image (an error page, a body cut short, stalled, refused). Part of
    /// `receivedBytes(on:)`, with the downloaded bytes. A failed attempt's body kept for resuming
    /// is counted here once: the resumed download counts only the rest.
    public private(set) var failedBytes: [Link: Int]

    /// Nothing loaded.
    public init() {
        amounts = [:]
        originalsNotDownloaded = [:]
        retries = [:]
        resumedBytes = [:]
        failedBytes = [:]
    }

    /// Whether nothing at all was counted.
    public var isEmpty: Bool {
        amounts.isEmpty && originalsNotDownloaded.isEmpty && retries.isEmpty && resumedBytes.isEmpty && failedBytes.isEmpty
    }

    /// Adds one load of `amount` under `key`.
    public mutating func add(_ amount: Amount, for key: Key) {
        amounts[key, default: Amount()] += amount
    }

    /// Adds `count` originals not downloaded on `link`.
    public mutating func addOriginalsNotDownloaded(_ count: Int, on link: Link) {
        guard count > 0 else { return }
        originalsNotDownloaded[link] = saturatingSum(originalsNotDownloaded[link] ?? 0, count)
    }

    /// Adds `count` retried downloads on `link`.
    public mutating func addRetries(_ count: Int, on link: Link) {
        guard count > 0 else { return }
        retries[link] = saturatingSum(retries[link] ?? 0, count)
    }

    /// Adds `bytes` not downloaded again thanks to resuming on `link`.
    public mutating func addResumedBytes(_ bytes: Int, on link: Link) {
        guard bytes > 0 else { return }
        resumedBytes[link] = saturatingSum(resumedBytes[link] ?? 0, bytes)
    }

    /// Adds `bytes` received by failed or cancelled attempts on `link`.
    public mutating func addFailedBytes(_ bytes: Int, on link: Link) {
        guard bytes > 0 else { return }
        failedBytes[link] = saturatingSum(failedBytes[link] ?? 0, bytes)
    }

    /// Adds everything `other` counted.
    public mutating func merge(_ other: DataUsage) {
        for (key, amount) in other.amounts { add(amount, for: key) }
        for (link, count) in other.originalsNotDownloaded { addOriginalsNotDownloaded(count, on: link) }
        for (link, count) in other.retries { addRetries(count, on: link) }
        for (link, bytes) in other.resumedBytes { addResumedBytes(bytes, on: link) }
        for (link, bytes) in other.failedBytes { addFailedBytes(bytes, on: link) }
    }

    /// The sum of two usages.
    public static func + (lhs: DataUsage, rhs: DataUsage) -> DataUsage {
        var sum = lhs
        sum.merge(rhs)
        return sum
    }

    /// Adds `rhs`.
    public static func += (lhs: inout DataUsage, rhs: DataUsage) { lhs.merge(rhs) }

    // MARK: - Totals

    /// The amount of every key that `include` accepts.
    public func amount(where include: (Key) -> Bool) -> Amount {
        amounts.reduce(Amount()) { include($1.key) ? $0 + $1.value : $0 }
    }

    /// Bytes and transfers from `source`.
    public func amount(from source: ImageSource) -> Amount { amount { $0.source == source } }

    /// Bytes downloaded for images loaded (source `.network`) on the links `include` accepts (all
    /// by default); without the bytes of failed attempts (see `receivedBytes(on:)`).
    public func downloadedBytes(on include: (Link) -> Bool = { _ in true }) -> Int {
        amount { $0.source == .network && include($0.link) }.bytes
    }

    /// Every body byte received from the network on the links `include` accepts (all by
    /// default): the bytes downloaded for images plus those of failed or cancelled attempts.
    /// What a metered link counted.
    ///
    /// ```swift
    /// let cellular = usage.receivedBytes { $0.kind == .cellular }
    /// ```
    public func receivedBytes(on include: (Link) -> Bool = { _ in true }) -> Int {
        saturatingSum(downloadedBytes(on: include), failedBytes(on: include))
    }

    /// Every link that appears in the usage, in order.
    public var links: [Link] {
        Set(amounts.keys.map(\.link)).union(originalsNotDownloaded.keys).union(retries.keys).union(resumedBytes.keys)
            .union(failedBytes.keys).sorted()
    }

    /// Originals not downloaded on the links `include` accepts (all by default).
    public func originalsNotDownloaded(on include: (Link) -> Bool = { _ in true }) -> Int {
        originalsNotDownloaded.reduce(0) { include($1.key) ? saturatingSum($0, $1.value) : $0 }
    }

    /// Retries made on the links `include` accepts (all by default).
    public func retries(on include: (Link) -> Bool = { _ in true }) -> Int {
        retries.reduce(0) { include($1.key) ? saturatingSum($0, $1.value) : $0 }
    }

    /// Bytes not downloaded again thanks to resuming, on the links `include` accepts (all by default).
    public func resumedBytes(on include: (Link) -> Bool = { _ in true }) -> Int {
        resumedBytes.reduce(0) { include($1.key) ? saturatingSum($0, $1.value) : $0 }
    }

    /// Bytes received by failed or cancelled attempts, on the links `include` accepts (all by default).
    public func failedBytes(on include: (Link) -> Bool = { _ in true }) -> Int {
        failedBytes.reduce(0) { include($1.key) ? saturatingSum($0, $1.value) : $0 }
    }

    // MARK: - Saved bytes (an estimate)

    /// The mean size of the originals actually downloaded here (bytes / transfers of originals
    /// from the network); nil when none was downloaded. A measurement of what was downloaded,
    /// used only as the basis of an estimate.
    public var averageOriginalBytes: Int? {
        let originals = amount { $0.source == .network && $0.variant == .original }
        return originals.transfers > 0 ? originals.bytes / originals.transfers : nil
    }

    /// An **estimate** of the bytes the policy saved on the links `include` accepts: the
    /// originals not downloaded there, each counted as `perOriginal` bytes (usually an
    /// `averageOriginalBytes`). The thumbnails loaded instead are not subtracted: they are counted
    /// in the downloaded bytes. Never present it as measured.
    public func estimatedSavedBytes(perOriginal: Int, on include: (Link) -> Bool = { _ in true }) -> Int {
        let count = originalsNotDownloaded(on: include)
        let (product, overflow) = count.multipliedReportingOverflow(by: max(0, perOriginal))
        return overflow ? .max : product
    }
}

extension NetworkKind {
    /// The order links are listed in.
    var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}

