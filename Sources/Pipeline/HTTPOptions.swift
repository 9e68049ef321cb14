import Policy
import Transport
import Caching
import Accounting
import HTTPSemantics
import Support

/// How the pipeline talks HTTP: when stale disk entries are revalidated, how long responses
/// without freshness information stay fresh, whether requests carry `Save-Data`, which formats
/// `Accept` lists, and the wall clock freshness is computed with.
///
/// Defaults: a stale entry is shown at once and revalidated in the background on a free link
/// (Wi-Fi, wired, unknown; neither expensive, constrained nor roaming); on an expensive or
/// roaming link, or offline, it is shown without a request. `Save-Data: on` on a cellular,
/// expensive, constrained or roaming link. `Accept` lists every format `ImageFormat` recognises,
/// best first. A policy file's `revalidateStale` option overrides the revalidation choices
/// (`following(_:)`); the rest is set here.
///
/// ```swift
/// var options = HTTPOptions.standard
/// options.revalidatesOnExpensiveLink = true         // also revalidate on cellular
/// options.acceptedFormats = [.webp, .png, .jpeg]    // what this app can decode
/// let pipeline = ImagePipeline(downloader: transport, disk: disk, http: options)
/// ```
public struct HTTPOptions: Sendable {
    /// Revalidate stale entries (in the background, the stale bytes shown at once) on a free link.
    public var revalidatesOnFreeLink: Bool
    /// Revalidate stale entries on an expensive, constrained or roaming link too.
    public var revalidatesOnExpensiveLink: Bool
    /// Which retries a failed download may make on a link that costs (neither a free Wi-Fi nor
    /// wired link: `NetworkState.isFreeLink`); on a free link every retry the transport's
    /// `RetryPolicy` allows is made. Default `.withoutRedownloading`: a retry that would download
    /// image bytes again (a body cut short that cannot be resumed) is not made.
    public var retriesOnCostlyLink: RetryScope
    /// How long responses without `max-age` or `Expires` stay fresh (7 days by default).
    public var freshnessRules: HTTPFreshness.Rules
    /// Send `Save-Data: on` on a cellular, expensive, constrained or roaming link.
    public var sendsSaveData: Bool
    /// Send the `ECT` and `Downlink` client hints (the effective connection type and the
    /// measured downlink in megabits per second) whenever the pipeline's `LinkEstimator` has an
    /// estimate for the link, on any network kind: a CDN can then send a smaller image to a slow
    /// Wi-Fi too. Without an estimate nothing is sent. Default true.
    public var sendsNetworkHints: Bool
    /// The formats the app can use, best first: listed in `Accept`, and a response of another
    /// format is refused (`FetchError.Code.formatNotAsked`). Empty: no `Accept`, no check.
    public var acceptedFormats: [ImageFormat]
    /// The wall clock: "now" for freshness, and the times a request was sent and its response
    /// received. Tests inject their own.
    public var clock: @Sendable () -> HTTPDate

    /// Options; every parameter defaults to the standard value.
    public init(revalidatesOnFreeLink: Bool = true, revalidatesOnExpensiveLink: Bool = false,
                retriesOnCostlyLink: RetryScope = .costlyLinkDefault, freshnessRules: HTTPFreshness.Rules = .default, sendsSaveData: Bool = true, sendsNetworkHints: Bool = true,
                acceptedFormats: [ImageFormat] = HTTPOptions.standardFormats,
                clock: @escaping @Sendable () -> HTTPDate = { HTTPDate.now() }) {
        self.revalidatesOnFreeLink = revalidatesOnFreeLink
        self.revalidatesOnExpensiveLink = revalidatesOnExpensiveLink
        self.retriesOnCostlyLink = retriesOnCostlyLink
        self.freshnessRules = freshnessRules
        self.sendsSaveData = sendsSaveData
        self.sendsNetworkHints = sendsNetworkHints
        self.acceptedFormats = acceptedFormats
        self.clock = clock
    }

    /// The defaults described on the type.
    public static let standard = HTTPOptions()

    /// Every format `ImageFormat.sniff` recognises, best first: WebP, AVIF, PNG, JPEG, then GIF
    /// and the rest at lower quality values.
    public static let standardFormats: [ImageFormat] = [.webp, .avif, .png, .jpeg, .gif, .heic, .svg, .bmp, .tiff, .ico]

    /// The standard formats the app's decoder can decode, best first (in `standardFormats`'
    /// order, whatever the order of `names`): `names` are format names matched without regard to
    /// case (`"JPEG"`, `"webp"`; `"jpg"` is JPEG), or media types (`"image/png"`); unknown names are
    /// ignored. For `acceptedFormats`, so that `Accept` lists only what the app can show:
    ///
    /// ```swift
    /// // The Decoding module decodes JPEG, PNG, WebP and GIF (not AVIF, HEIC, SVG…):
    /// options.acceptedFormats = HTTPOptions.standardFormats(limitedTo: ["JPEG", "PNG", "WebP", "GIF"])
    /// // Accept: image/webp,image/png,image/jpeg,image/gif;q=0.8
    /// ```
    public static func standardFormats(limitedTo names: some Sequence<String>) -> [ImageFormat] {
        let wanted = Set(names.compactMap { name -> ImageFormat? in
            let lowered = name.lowercased()
            if lowered == "jpg" { return .jpeg }
            return ImageFormat(rawValue: lowered) ?? ImageFormat.allCases.first { $0.mediaType == lowered }
        })
        return standardFormats.filter(wanted.contains)
    }

    /// These options with the revalidation `policy` asks for in its `revalidateStale` option
    /// (`ImagePolicy.staleRevalidation`) and the retries it allows on a costly link in its
    /// `retryOnCostlyLink` option (`ImagePolicy.costlyLinkRetries`); each unchanged when the
    /// policy does not say.
    ///
    /// ```swift
    /// let pipeline = ImagePipeline(downloader: transport, disk: disk, http: HTTPOptions.standard.following(policy))
    /// ```
    public func following(_ policy: ImagePolicy) -> HTTPOptions {
        var options = self
        switch policy.staleRevalidation {
        case nil: break
        case .freeLink?: (options.revalidatesOnFreeLink, options.revalidatesOnExpensiveLink) = (true, false)
        case .anyLink?: (options.revalidatesOnFreeLink, options.revalidatesOnExpensiveLink) = (true, true)
        case .never?: (options.revalidatesOnFreeLink, options.revalidatesOnExpensiveLink) = (false, false)
        }
        if let retries = policy.costlyLinkRetries { options.retriesOnCostlyLink = retries }
        return options
    }

    /// Which retries a download on `network` may make (nil: unknown, taken as free): every one
    /// on a free link, `retriesOnCostlyLink` on any other.
    public func retries(on network: NetworkState?) -> RetryScope {
        guard let network, !network.isFreeLink else { return .asConfigured }
        return retriesOnCostlyLink
    }

    /// Whether a stale entry is revalidated on `network` (nil: unknown, taken as free): never
    /// offline or captive; on a free link (`NetworkState.isFreeLink`: Wi-Fi, wired or unknown and
    /// nothing costly) per `revalidatesOnFreeLink`; on any other (cellular, expensive,
    /// constrained, roaming) per `revalidatesOnExpensiveLink`.
    public func revalidates(on network: NetworkState?) -> Bool {
        guard let network else { return revalidatesOnFreeLink }
        if network.kind == .offline || network.isCaptive { return false }
        return network.isFreeLink ? revalidatesOnFreeLink : revalidatesOnExpensiveLink
    }

    /// The request fields every request on `network` carries: `Save-Data`, `ECT` and `Downlink`
    /// (with `estimate`, the link measured for `network`), and `Accept`.
    public func negotiationHeaders(on network: NetworkState?, estimate: LinkEstimate? = nil) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if sendsSaveData, let network, Self.isCostly(network) || network.kind == .cellular {
            fields.append(("Save-Data", "on"))
        }
        if sendsNetworkHints, let estimate, let hints = NetworkHints(estimate) {
            fields.append(("ECT", hints.effectiveType))
            fields.append(("Downlink", hints.downlink))
        }
        if !acceptedFormats.isEmpty { fields.append(("Accept", acceptHeader)) }
        return fields
    }

    /// `Accept` for `acceptedFormats`: the first four at full quality, GIF and later ones lower.
    public var acceptHeader: String {
        acceptedFormats.enumerated().map { index, format in
            let quality = format == .gif ? ";q=0.8" : index >= 4 ? ";q=0.5" : ""
            return format.mediaType + quality
        }.joined(separator: ",")
    }

    /// Checks that `body` is of a format asked for; `url` names it in the error.
    func checkFormat(of body: [UInt8], for url: ImageURL) throws(FetchError) {
        guard !acceptedFormats.isEmpty, let format = ImageFormat.sniff(body), !acceptedFormats.contains(format) else { return }
        throw FetchError(url: url, code: .formatNotAsked(received: format, asked: acceptedFormats))
    }

    private static func isCostly(_ network: NetworkState) -> Bool {
        network.isExpensive || network.isConstrained || network.isRoaming
    }
}

/// How a format is named in an `Accept` request field.
extension ImageFormat {
    /// The media type (`image/webp`), as `Accept` lists it.
    public var mediaType: String {
        switch self {
        case .svg: return "image/svg+xml"
        case .ico: return "image/x-icon"
        default: return "image/" + rawValue
        }
    }
}
