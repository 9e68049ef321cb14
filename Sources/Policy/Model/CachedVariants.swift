/// Which of an item's variants are in the cache right now: neither, the original, the
/// thumbnail, or both.
public struct CachedVariants: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The raw bits: 1 for the original, 2 for the thumbnail.
    public let rawValue: UInt8

    /// Creates a set from raw bits.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue & 3 }

    /// The original is cached.
    @inlinable public static var original: CachedVariants { CachedVariants(rawValue: 1) }
    /// The thumbnail is cached.
    @inlinable public static var thumbnail: CachedVariants { CachedVariants(rawValue: 2) }
    /// Nothing is cached.
    @inlinable public static var none: CachedVariants { CachedVariants(rawValue: 0) }
    /// Both are cached.
    @inlinable public static var both: CachedVariants { CachedVariants(rawValue: 3) }

    /// The set holding just `variant`.
    @inlinable
    public init(_ variant: Variant) {
        self = variant == .original ? .original : .thumbnail
    }

    /// Whether `variant` is cached.
    @inlinable
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
