/// The kind of link that carries the device's traffic.
public enum NetworkKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Wi-Fi (WLAN).
    case wifi
    /// A cellular (mobile, WWAN) link.
    case cellular
    /// Wired Ethernet, or a link that behaves like it.
    case wired
    /// No usable link at all.
    case offline
    /// A link that could not be classified. The default policy treats it as cellular: the cautious
    /// choice when the cost of data is not known.
    case unknown

    /// The name used in files, flags and output: `wifi`, `cellular`, `wired`, `offline`, `unknown`.
    public var description: String { rawValue }

    /// This kind's bit in a mask of kinds: `1 << index`.
    @inline(__always)
    var bit: UInt8 { 1 << UInt8(index) }

    /// A dense index 0..<5, for tables.
    @usableFromInline @inline(__always)
    var index: Int {
        switch self {
        case .wifi: return 0
        case .cellular: return 1
        case .wired: return 2
        case .offline: return 3
        case .unknown: return 4
        }
    }
}
