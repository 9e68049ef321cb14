/// An `ETag` (RFC 9110 §8.8.3): an opaque quoted string, weak when it starts with `W/`.
///
/// ```swift
/// let tag = EntityTag(parsing: #"W/"v7""#)   // weak, opaque tag "v7"
/// tag?.headerValue                           // W/"v7": sent back as is in If-None-Match
/// ```
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// The opaque tag, quotes included (`"v7"`).
    public var opaqueTag: String
    /// Whether it is a weak validator (`W/"…"`): good for `If-None-Match`, never for `If-Range`.
    public var isWeak: Bool

    /// The longest tag kept, in bytes: a longer one is no validator (it is not stored).
    public static let longest = 1024

    /// A tag from its parts.
    public init(opaqueTag: String, isWeak: Bool) {
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// The tag in an `ETag` field value, or nil when it is not one: it must be a double-quoted
    /// string of visible characters without `"` (optionally after `W/`), at most `longest` bytes.
    public init?(parsing value: some StringProtocol) {
        var bytes = Array(value.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        guard bytes.count <= Self.longest else { return nil }
        var weak = false
        if bytes.starts(with: [0x57, 0x2F]) {  // W/
            weak = true
            bytes = bytes.dropFirst(2)
        }
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return nil }
        // etagc = "!" / %x23-7E / obs-text
        guard bytes.dropFirst().dropLast().allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }) else { return nil }
        opaqueTag = String(decoding: bytes, as: UTF8.self)
        isWeak = weak
    }

    /// The field value: `W/"…"` or `"…"`.
    public var headerValue: String { (isWeak ? "W/" : "") + opaqueTag }

    /// `headerValue`.
    public var description: String { headerValue }

    /// Strong comparison (RFC 9110 §8.8.3.2): both strong, same opaque tag.
    public func strongMatch(_ other: EntityTag) -> Bool { !isWeak && !other.isWeak && opaqueTag == other.opaqueTag }

    /// Weak comparison: the same opaque tag, weak or not.
    public func weakMatch(_ other: EntityTag) -> Bool { opaqueTag == other.opaqueTag }
}
