/// One of the two renditions of an item's image.
public enum Variant: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The full-resolution image.
    case original
    /// The small preview image.
    case thumbnail

    /// `original` or `thumbnail`.
    public var description: String { rawValue }
}
