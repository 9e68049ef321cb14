import Support

/// Where the module takes memory whose size an image decides (decoded pixels, the resampled and
/// the turned image, a PNG being written): `malloc`, checked. An allocation that fails is
/// ``DecodingError/Kind/outOfMemory``, never a trap — a Swift array that cannot be allocated
/// stops the process ("Fatal error: failed to allocate …"), and a legal 100-megapixel image needs
/// 400 MB. (Buffers the C glue takes for itself, and the libraries', are checked there.)
///
/// A struct of one closure so that the tests can make any allocation fail.
struct ImageMemory: Sendable {
    /// `count` bytes, or nil when they cannot be had.
    var allocate: @Sendable (_ count: Int) -> UnsafeMutableRawPointer?

    /// `malloc`.
    static let system = ImageMemory { count in malloc(max(count, 1)) }

    /// `count` uninitialised bytes for `what` (the error says it), or `.outOfMemory`.
    func allocation(_ count: Int, for what: @autoclosure () -> String, format: String?, size: (width: Int, height: Int)?) throws(DecodingError) -> ImageAllocation {
        guard count >= 0, let raw = allocate(count) else {
            throw DecodingError(kind: .outOfMemory, format: format, width: size?.width, height: size?.height,
                                detail: "cannot allocate \(count) bytes for \(what())")
        }
        return ImageAllocation(adopting: raw.bindMemory(to: UInt8.self, capacity: max(count, 1)), count: count)
    }
}
