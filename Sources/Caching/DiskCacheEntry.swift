import Policy
import HTTPSemantics
import Support

/// The bytes of one entry file, and their checks.
///
/// Layout (little-endian), format 2 (written since entries keep their HTTP freshness): magic
/// `IMGPC002` (8 bytes), body length (UInt64), body checksum (`Hash128`, 16 bytes), URL length
/// (UInt32), freshness slot size S (UInt32), the URL's UTF-8, two freshness slots of S bytes
/// each, the body.
///
/// A freshness slot: generation (UInt64; 0 is an empty slot), payload length (UInt16), a check
/// (UInt64) over the generation, the length and the payload, the payload (`encodeFreshness`), zeros.
/// The newest valid slot holds the entry's freshness. A refresh after a 304 writes the *other*
/// slot in place with the next generation (`DiskCacheFolder.rewriteFreshness`): a torn write
/// fails its check and the previous slot stands, so the body is never rewritten and never at risk.
///
/// Format 1 (`IMGPC001`, the only format before entries kept their freshness, and still the one
/// of an entry stored without HTTP information): the same without the slot size and the slots.
/// Such an entry has no freshness record (fresh for the default lifetime from the file's
/// modification time) and is rewritten in format 2 on its first refresh.
///
/// Every field is untrusted when read: lengths are compared before any conversion, so a damaged
/// file is a miss, never a trap.
enum DiskCacheEntry {
    static let magic: [UInt8] = Array("IMGPC002".utf8)
    static let legacyMagic: [UInt8] = Array("IMGPC001".utf8)
    /// The header of format 2.
    static let headerSize = 8 + 8 + 16 + 4 + 4
    /// The header of format 1.
    static let legacyHeaderSize = 8 + 8 + 16 + 4
    /// The longest URL an entry holds, in UTF-8 bytes (1 MiB): `store` refuses a longer one
    /// (`DiskCacheError.Code.tooLarge`), so every entry written can be read back.
    static let largestURL = 1 << 20
    /// The largest freshness slot read.
    static let largestSlot = 4096
    private static let slotHeader = 8 + 2 + 8

    /// Where the parts of an entry file are.
    struct Layout: Equatable {
        /// 1 or 2.
        var format: Int
        var urlLength: Int
        /// 0 in format 1.
        var slotSize: Int
        var urlOffset: Int { format == 1 ? DiskCacheEntry.legacyHeaderSize : DiskCacheEntry.headerSize }
        var slotsOffset: Int { urlOffset + urlLength }
        var bodyOffset: Int { slotsOffset + 2 * slotSize }
    }

    /// The entry file for `body` stored under `url`: with `freshness` in the first slot (format
    /// 2), or, without, in format 1 (no freshness record: fresh for the default lifetime from the
    /// file's modification time).
    static func encode(body: [UInt8], url: [UInt8], freshness: HTTPFreshness? = nil) -> [UInt8] {
        let payload = freshness.map(encodeFreshness)
        let slotSize = payload.map { Self.slotSize(forPayload: $0.count) } ?? 0
        var file: [UInt8] = []
        file.reserveCapacity(headerSize + url.count + 2 * slotSize + body.count)
        file += payload == nil ? legacyMagic : magic
        append(UInt64(body.count), to: &file)
        let checksum = Hash128(of: body)
        append(checksum.high, to: &file)
        append(checksum.low, to: &file)
        append(UInt32(truncatingIfNeeded: url.count), to: &file)
        if payload != nil { append(UInt32(slotSize), to: &file) }
        file += url
        if let payload {
            file += slot(payload, generation: 1, size: slotSize)
            file += [UInt8](repeating: 0, count: slotSize)
        }
        file += body
        return file
    }

    /// A slot large enough for a payload and a somewhat longer one later, in 64-byte steps.
    static func slotSize(forPayload count: Int) -> Int {
        (slotHeader + count + 32 + 63) / 64 * 64
    }

    /// The layout in `header` (the first bytes of a file of `fileSize` bytes: at least
    /// `headerSize`, or the whole file when shorter), if the magic is right and the lengths fit
    /// the file exactly.
    static func layout(header: UnsafeRawBufferPointer, fileSize: Int) -> Layout? {
        guard header.count >= legacyHeaderSize, fileSize >= legacyHeaderSize else { return nil }
        let format: Int
        if header.prefix(8).elementsEqual(magic) {
            format = 2
        } else if header.prefix(8).elementsEqual(legacyMagic) {
            format = 1
        } else {
            return nil
        }
        let bodyLength = header.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let urlLength = Int(header.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian)
        var slotSize = 0
        if format == 2 {
            guard header.count >= headerSize, fileSize >= headerSize else { return nil }
            slotSize = Int(header.loadUnaligned(fromByteOffset: 36, as: UInt32.self).littleEndian)
            guard slotSize >= slotHeader, slotSize <= largestSlot else { return nil }
        }
        let layout = Layout(format: format, urlLength: urlLength, slotSize: slotSize)
        guard urlLength <= largestURL, layout.bodyOffset <= fileSize else { return nil }
        let rest = fileSize - layout.bodyOffset
        guard bodyLength > 0, bodyLength == UInt64(rest) else { return nil }
        return layout
    }

    /// The URL length in `header`, if it is an entry's (see `layout`).
    static func urlLength(header: UnsafeRawBufferPointer, fileSize: Int) -> Int? {
        layout(header: header, fileSize: fileSize)?.urlLength
    }

    /// What an intact entry file holds.
    struct Contents {
        var body: [UInt8]
        /// nil in format 1.
        var freshness: HTTPFreshness?
    }

    /// The body and freshness in `file` if it is a complete, intact entry for `url`: nil for
    /// anything else (a format-2 file without any valid slot too).
    static func contents(of file: [UInt8], for url: ImageURL) -> Contents? {
        file.withUnsafeBytes { raw -> Contents? in
            guard let layout = layout(header: raw, fileSize: raw.count) else { return nil }
            let checksum = Hash128(high: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
                                   low: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
            let urlBytes = UnsafeRawBufferPointer(rebasing: raw[layout.urlOffset..<layout.urlOffset + layout.urlLength])
            guard urlBytes.elementsEqual(url.absoluteString.utf8) else { return nil }
            let bodyBytes = UnsafeRawBufferPointer(rebasing: raw[layout.bodyOffset...])
            guard Hash128(of: bodyBytes) == checksum else { return nil }
            guard layout.format == 2 else { return Contents(body: Array(bodyBytes), freshness: nil) }
            let slots = UnsafeRawBufferPointer(rebasing: raw[layout.slotsOffset..<layout.bodyOffset])
            guard let newest = newestSlot(slots, slotSize: layout.slotSize) else { return nil }
            return Contents(body: Array(bodyBytes), freshness: newest.freshness)
        }
    }

    /// The body in `file` if it is a complete, intact entry for `url`: nil for anything else.
    static func body(of file: [UInt8], for url: ImageURL) -> [UInt8]? {
        contents(of: file, for: url)?.body
    }

    // MARK: - Slots

    /// A slot of `size` bytes holding `payload` at `generation`.
    static func slot(_ payload: [UInt8], generation: UInt64, size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        append(generation, to: &bytes)
        append(UInt16(truncatingIfNeeded: payload.count), to: &bytes)
        let check = slotCheck(generation: generation, payload: payload)
        append(check, to: &bytes)
        bytes += payload
        bytes += [UInt8](repeating: 0, count: max(0, size - bytes.count))
        return bytes
    }

    /// Whether `payload` fits a slot of `size` bytes.
    static func fits(_ payload: [UInt8], slotSize size: Int) -> Bool { slotHeader + payload.count <= size }

    private static func slotCheck(generation: UInt64, payload: [UInt8]) -> UInt64 {
        payload.withUnsafeBytes { slotCheck(generation: generation, payload: $0) }
    }

    /// The check over the generation, the length and the payload, hashed from a buffer on the
    /// stack (a read of a slot allocates nothing for it).
    private static func slotCheck(generation: UInt64, payload: UnsafeRawBufferPointer) -> UInt64 {
        withUnsafeTemporaryAllocation(byteCount: 10 + payload.count, alignment: 8) { buffer in
            buffer.storeBytes(of: generation.littleEndian, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: UInt16(truncatingIfNeeded: payload.count).littleEndian, toByteOffset: 8, as: UInt16.self)
            if let source = payload.baseAddress, payload.count > 0 {
                (buffer.baseAddress! + 10).copyMemory(from: source, byteCount: payload.count)
            }
            let hash = Hash128(of: UnsafeRawBufferPointer(buffer))
            return hash.high ^ hash.low.rotatedLeft(17)
        }
    }

    /// The valid slot with the highest generation in `slots` (two slots of `slotSize` bytes), and
    /// which one it is (0 or 1).
    static func newestSlot(_ slots: UnsafeRawBufferPointer, slotSize: Int) -> (position: Int, generation: UInt64, freshness: HTTPFreshness)? {
        guard slots.count >= 2 * slotSize else { return nil }
        var best: (position: Int, generation: UInt64, freshness: HTTPFreshness)?
        for position in 0..<2 {
            let base = position * slotSize
            let generation = UInt64(littleEndian: slots.loadUnaligned(fromByteOffset: base, as: UInt64.self))
            let length = Int(UInt16(littleEndian: slots.loadUnaligned(fromByteOffset: base + 8, as: UInt16.self)))
            let check = UInt64(littleEndian: slots.loadUnaligned(fromByteOffset: base + 10, as: UInt64.self))
            guard generation > 0, slotHeader + length <= slotSize else { continue }
            let payload = UnsafeRawBufferPointer(rebasing: slots[(base + slotHeader)..<(base + slotHeader + length)])
            guard check == slotCheck(generation: generation, payload: payload),
                  let freshness = decodeFreshness(payload) else { continue }
            if best == nil || generation > best!.generation { best = (position, generation, freshness) }
        }
        return best
    }

    // MARK: - Freshness records

    private struct Flags: OptionSet {
        let rawValue: UInt16
        static let noCache = Flags(rawValue: 1 << 0)
        static let noStore = Flags(rawValue: 1 << 1)
        static let mustRevalidate = Flags(rawValue: 1 << 2)
        static let immutable = Flags(rawValue: 1 << 3)
        static let entityTag = Flags(rawValue: 1 << 4)
        static let weak = Flags(rawValue: 1 << 5)
        static let lastModified = Flags(rawValue: 1 << 6)
        static let date = Flags(rawValue: 1 << 7)
        static let expires = Flags(rawValue: 1 << 8)
        static let maxAge = Flags(rawValue: 1 << 9)
        static let staleWhileRevalidate = Flags(rawValue: 1 << 10)
    }

    private static let recordVersion: UInt8 = 1
    private static let recordFixedSize = 1 + 2 + 2 + 8 * 8 + 2

    /// A freshness as bytes: version (1), flags (UInt16), status (UInt16), requested, received,
    /// Last-Modified, Date, Expires (seconds since 1970, Int64), Age, max-age,
    /// stale-while-revalidate (Int64), the entity tag's length (UInt16) and its opaque tag.
    static func encodeFreshness(_ freshness: HTTPFreshness) -> [UInt8] {
        var flags: Flags = []
        if freshness.noCache { flags.insert(.noCache) }
        if freshness.noStore { flags.insert(.noStore) }
        if freshness.mustRevalidate { flags.insert(.mustRevalidate) }
        if freshness.isImmutable { flags.insert(.immutable) }
        if let tag = freshness.entityTag {
            flags.insert(.entityTag)
            if tag.isWeak { flags.insert(.weak) }
        }
        if freshness.lastModified != nil { flags.insert(.lastModified) }
        if freshness.date != nil { flags.insert(.date) }
        if freshness.expires != nil { flags.insert(.expires) }
        if freshness.maxAge != nil { flags.insert(.maxAge) }
        if freshness.staleWhileRevalidate != nil { flags.insert(.staleWhileRevalidate) }
        var bytes: [UInt8] = [recordVersion]
        append(flags.rawValue, to: &bytes)
        append(UInt16(clamping: max(0, freshness.status)), to: &bytes)
        for value in [freshness.requestedAt.secondsSince1970, freshness.receivedAt.secondsSince1970,
                      freshness.lastModified?.secondsSince1970 ?? 0, freshness.date?.secondsSince1970 ?? 0,
                      freshness.expires?.secondsSince1970 ?? 0, freshness.age, freshness.maxAge ?? 0,
                      freshness.staleWhileRevalidate ?? 0] {
            append(UInt64(bitPattern: value), to: &bytes)
        }
        let tag = Array((freshness.entityTag?.opaqueTag ?? "").utf8.prefix(EntityTag.longest))
        append(UInt16(tag.count), to: &bytes)
        return bytes + tag
    }

    /// The freshness in `bytes`, or nil when they are not one (checked field by field).
    static func decodeFreshness(_ bytes: [UInt8]) -> HTTPFreshness? {
        bytes.withUnsafeBytes { decodeFreshness($0) }
    }

    /// `decodeFreshness(_:)` of bytes in place (a slot of an entry file read whole).
    static func decodeFreshness(_ raw: UnsafeRawBufferPointer) -> HTTPFreshness? {
        guard raw.count >= recordFixedSize, raw[0] == recordVersion else { return nil }
        let flags = Flags(rawValue: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt16.self)))
        let status = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 3, as: UInt16.self)))
        func value(_ index: Int) -> Int64 {
            Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 5 + index * 8, as: UInt64.self)))
        }
        func delta(_ index: Int) -> Int64 { min(max(0, value(index)), HTTPFreshness.largestDeltaSeconds) }
        let tagLength = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 69, as: UInt16.self)))
        guard (100...999).contains(status), tagLength <= EntityTag.longest, recordFixedSize + tagLength == raw.count else { return nil }
        var freshness = HTTPFreshness(status: status, headers: [], receivedAt: HTTPDate(secondsSince1970: value(1)))
        freshness.requestedAt = HTTPDate(secondsSince1970: min(value(0), value(1)))
        if flags.contains(.entityTag) {
            let opaque = String(decoding: raw[recordFixedSize...], as: UTF8.self)
            guard let tag = EntityTag(parsing: (flags.contains(.weak) ? "W/" : "") + opaque), tag.opaqueTag == opaque else { return nil }
            freshness.entityTag = tag
        }
        if flags.contains(.lastModified) { freshness.lastModified = HTTPDate(secondsSince1970: value(2)) }
        if flags.contains(.date) { freshness.date = HTTPDate(secondsSince1970: value(3)) }
        if flags.contains(.expires) { freshness.expires = HTTPDate(secondsSince1970: value(4)) }
        freshness.age = delta(5)
        if flags.contains(.maxAge) { freshness.maxAge = delta(6) }
        if flags.contains(.staleWhileRevalidate) { freshness.staleWhileRevalidate = delta(7) }
        freshness.noCache = flags.contains(.noCache)
        freshness.noStore = flags.contains(.noStore)
        freshness.mustRevalidate = flags.contains(.mustRevalidate)
        freshness.isImmutable = flags.contains(.immutable)
        return freshness
    }

    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
