import HTTPSemantics
import Support
/// A fast 128-bit hash (MurmurHash3, x64 128-bit variant): the disk cache's file names (of the
/// URL) and entry checksums (of the body). It is not cryptographic: each entry also stores its URL,
/// checked on every read, so a collision can cost a refetch but never show the wrong image.
public struct Hash128: Hashable, Sendable, CustomStringConvertible {
    /// The two 64-bit halves.
    public var high: UInt64
    /// See `high`.
    public var low: UInt64

    /// Creates a hash from its halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The hash of `bytes`.
    public init(of bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) {
        let c1: UInt64 = 0x87c3_7b91_1142_53d5
        let c2: UInt64 = 0x4cf5_ad43_2745_937f
        var h1 = seed, h2 = seed
        let count = bytes.count
        let blocks = count / 16
        for block in 0..<blocks {
            var k1 = bytes.loadUnaligned(fromByteOffset: block * 16, as: UInt64.self).littleEndian
            var k2 = bytes.loadUnaligned(fromByteOffset: block * 16 + 8, as: UInt64.self).littleEndian
            k1 &*= c1; k1 = k1.rotatedLeft(31); k1 &*= c2; h1 ^= k1
            h1 = h1.rotatedLeft(27); h1 &+= h2; h1 = h1 &* 5 &+ 0x52dc_e729
            k2 &*= c2; k2 = k2.rotatedLeft(33); k2 &*= c1; h2 ^= k2
            h2 = h2.rotatedLeft(31); h2 &+= h1; h2 = h2 &* 5 &+ 0x3849_5ab5
        }
        var k1: UInt64 = 0, k2: UInt64 = 0
        let tail = blocks * 16
        let rest = count & 15
        if rest > 8 {
            for index in stride(from: rest - 1, through: 8, by: -1) {
                k2 ^= UInt64(bytes[tail + index]) << (UInt64(index - 8) * 8)
            }
            k2 &*= c2; k2 = k2.rotatedLeft(33); k2 &*= c1; h2 ^= k2
        }
        if rest > 0 {
            for index in stride(from: min(rest, 8) - 1, through: 0, by: -1) {
                k1 ^= UInt64(bytes[tail + index]) << (UInt64(index) * 8)
            }
            k1 &*= c1; k1 = k1.rotatedLeft(31); k1 &*= c2; h1 ^= k1
        }
        h1 ^= UInt64(count); h2 ^= UInt64(count)
        h1 &+= h2; h2 &+= h1
        h1 = Self.finalMix(h1); h2 = Self.finalMix(h2)
        h1 &+= h2; h2 &+= h1
        high = h1
        low = h2
    }

    /// The hash of `bytes`.
    public init(of bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { Hash128(of: $0) }
    }

    /// The hash of a string's UTF-8.
    public init(of text: String) {
        var text = text
        self = text.withUTF8 { Hash128(of: UnsafeRawBufferPointer($0)) }
    }

    private static func finalMix(_ value: UInt64) -> UInt64 {
        var k = value
        k ^= k >> 33; k &*= 0xff51_afd7_ed55_8ccd
        k ^= k >> 33; k &*= 0xc4ce_b9fe_1a85_ec53
        k ^= k >> 33
        return k
    }

    /// 32 lowercase hex digits.
    public var description: String {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(high) + hex(low)
    }

    /// Parses 32 hex digits.
    public init?(hex: some StringProtocol) {
        guard hex.count == 32, let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16) else {
            return nil
        }
        self.init(high: high, low: low)
    }
}

extension UInt64 {
    @inline(__always)
    func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
