/// The bytes of an image this module hands out: a ``DecodedImage``'s pixels, the PNG a
/// ``PNGEncoder`` made.
///
/// A random-access collection of `UInt8` indexed from 0, compared by content. Memory the module
/// takes for an image is allocated with `malloc` and checked: an allocation that fails is a
/// ``DecodingError`` of kind ``DecodingError/Kind/outOfMemory``, never a trap (a Swift array that
/// cannot be allocated stops the whole process, and an image's size is decided by the image).
/// Bytes given as an array are kept as that array, not copied.
///
/// Read them in place, or copy them when an array is needed:
///
/// ```swift
/// let image = try decoder.decode(bytes, to: TargetSize(width: 600, height: 400))
/// image.pixels.withUnsafeBytes { raw in upload(raw.baseAddress!, image.bytesPerRow) }   // no copy
/// let first = image.pixels[0]
/// let copy = Array(image.pixels)                                                        // a copy
/// ```
public struct ImageBytes: RandomAccessCollection, Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Sendable {
        case array([UInt8])
        case allocated(ImageAllocation)
    }

    private let storage: Storage

    /// `bytes`, kept as they are (not copied).
    public init(_ bytes: [UInt8]) {
        storage = .array(bytes)
    }

    /// The bytes of a filled allocation (which nothing writes any more).
    init(_ allocation: ImageAllocation) {
        storage = .allocated(allocation)
    }

    /// 0.
    public var startIndex: Int { 0 }

    /// The number of bytes.
    public var endIndex: Int {
        switch storage {
        case .array(let bytes): bytes.count
        case .allocated(let allocation): allocation.count
        }
    }

    /// The byte at `position` (0 ..< count; anything else stops the program, as an array's subscript does).
    public subscript(position: Int) -> UInt8 {
        switch storage {
        case .array(let bytes):
            return bytes[position]
        case .allocated(let allocation):
            precondition(position >= 0 && position < allocation.count, "ImageBytes: index \(position) out of range 0..<\(allocation.count)")
            return allocation.base[position]
        }
    }

    /// Calls `body` with the bytes in place, for the duration of the call.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeBufferPointer { (buffer) throws(Failure) -> Result in try body(UnsafeRawBufferPointer(buffer)) }
    }

    /// Calls `body` with the bytes in place, typed, for the duration of the call.
    public func withUnsafeBufferPointer<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        switch storage {
        case .array(let bytes):
            // Array's own accessor rethrows untyped errors: the typed one is carried out by hand.
            let outcome: Swift.Result<Result, Failure> = bytes.withUnsafeBufferPointer { buffer in
                do throws(Failure) { return .success(try body(buffer)) } catch { return .failure(error) }
            }
            return try outcome.get()
        case .allocated(let allocation):
            defer { withExtendedLifetime(allocation) {} }
            return try body(UnsafeBufferPointer(start: allocation.base, count: allocation.count))
        }
    }

    /// The bytes in place (contiguous, always): `Array(bytes)` and `Data(bytes)` copy them at once.
    public func withContiguousStorageIfAvailable<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        switch storage {
        case .array(let bytes):
            return try bytes.withUnsafeBufferPointer(body)
        case .allocated(let allocation):
            defer { withExtendedLifetime(allocation) {} }
            return try body(UnsafeBufferPointer(start: allocation.base, count: allocation.count))
        }
    }

    /// The same bytes, in the same order.
    public static func == (lhs: ImageBytes, rhs: ImageBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in a.elementsEqual(b) } }
    }

    /// Hashes the bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// `ImageBytes(N bytes)`: never the bytes themselves.
    public var description: String { "ImageBytes(\(count) bytes)" }
}
