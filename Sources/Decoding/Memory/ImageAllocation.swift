import Support

/// Image-sized memory from `malloc`, freed when the last ``ImageBytes`` holding it is gone.
///
/// `@unchecked Sendable` without a lock: the bytes are written, and `shrink(to:)` called, only by
/// the code that allocated them, on its own thread, before they are wrapped in an `ImageBytes`;
/// after that nothing writes them and `base` and `count` never change.
final class ImageAllocation: @unchecked Sendable {
    /// The first byte.
    private(set) var base: UnsafeMutablePointer<UInt8>
    /// How many bytes.
    private(set) var count: Int

    /// Takes ownership of `count` bytes at `base`, which were allocated with `malloc` and are
    /// freed with `free`.
    init(adopting base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    /// Gives back the bytes past `newCount` (`realloc`; when it cannot move them, they stay).
    /// Only before the allocation is wrapped in an `ImageBytes`.
    func shrink(to newCount: Int) {
        guard newCount >= 0, newCount < count else { return }
        if let smaller = realloc(base, max(newCount, 1)) {
            base = smaller.assumingMemoryBound(to: UInt8.self)
        }
        count = newCount
    }

    deinit {
        free(base)
    }
}
