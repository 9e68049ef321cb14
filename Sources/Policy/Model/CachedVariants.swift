/// Which of an item's variants are in the cache right now: neither, the original, the
/// thumbnail, or both.
public struct CachedVariants: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The raw bits: 1 for the original, 2 for the thumbnail.
    public let rawValue: UInt8

    /// Creates a set from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 3 }

    /// The original is cached.
    public static let original = CachedVariants(rawValue: 1)
    /// The thumbnail is cached.
    public static let thumbnail = CachedVariants(rawValue: 2)
    /// Nothing is cached.
    public static let none: CachedVariants = []
    /// Both are cached.
    public static let both: CachedVariants = [.original, .thumbnail]

    /// The set holding just `variant`.
    public init(_ variant: Variant) {
        self = variant == .original ? .original : .thumbnail
    }

    /// Whether `variant` is cached.
    public func has(_ variant: Variant) -> Bool { contains(CachedVariants(variant)) }

    /// `none`, `original`, `thumbnail` or `original+thumbnail`.
    public var description: String {
        switch rawValue {
        case 0: return "none"
        case 1: return "original"
        case 2: return "thumbnail"
        default: return "original+thumbnail"
        }
    }
}
