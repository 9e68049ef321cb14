import CImageCodecs
import Support

/// The formats this module decodes, recognised by their first bytes, and the C glue for each.
enum ImageCodec: String, Sendable, CaseIterable {
    case jpeg = "JPEG", png = "PNG", webp = "WebP", gif = "GIF"

    /// The format whose signature `bytes` start with.
    static func sniff(_ bytes: UnsafeBufferPointer<UInt8>) -> ImageCodec? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        return nil
    }

    /// What a file's header declares.
    struct Header {
        /// The declared width and height (of an animation: its canvas).
        var width: Int, height: Int
    }

    /// The header's facts.
    func info(_ bytes: UnsafeBufferPointer<UInt8>) throws(DecodingError) -> Header {
        // A WebP's animation and alpha flags are not needed: every WebP is decoded at its declared
        // (canvas) size and resampled here, as a PNG is.
        var width: CInt = 0, height: CInt = 0, animated: CInt = 0, alpha: CInt = 0
        var message = [CChar](repeating: 0, count: Int(IMGC_MESSAGE_CAPACITY))
        let status = message.withUnsafeMutableBufferPointer { text in
            switch self {
            case .jpeg: imgc_jpeg_info(bytes.baseAddress, bytes.count, &width, &height, text.baseAddress)
            case .png: imgc_png_info(bytes.baseAddress, bytes.count, &width, &height, text.baseAddress)
            case .webp: imgc_webp_info(bytes.baseAddress, bytes.count, &width, &height, &animated, &alpha, text.baseAddress)
            case .gif: imgc_gif_info(bytes.baseAddress, bytes.count, &width, &height, text.baseAddress)
            }
        }
        try check(status, message)
        guard width > 0, height > 0 else {
            throw DecodingError(kind: .corrupt, format: rawValue, detail: "declared size \(width)x\(height)")
        }
        return Header(width: Int(width), height: Int(height))
    }

    /// What became of an embedded colour profile.
    enum ProfileOutcome: Equatable {
        /// None in the file (or not asked for): the values are taken as sRGB.
        case none
        /// Converted from the profile to sRGB.
        case applied
        /// A profile that could not be applied, and why: the pixels are as without it.
        case ignored(String)
    }

    /// Decodes into a new buffer of `width` × `height` RGBA8 pixels (the declared size, or for
    /// JPEG a TurboJPEG scaled size), converting an embedded ICC profile to sRGB when
    /// `colorProfiles` is true. The buffer comes from `memory`: one that cannot be had is
    /// `.outOfMemory`, with the declared size `declared`.
    func decode(_ bytes: UnsafeBufferPointer<UInt8>, width: Int, height: Int, declared: (width: Int, height: Int),
                colorProfiles: Bool, memory: ImageMemory) throws(DecodingError) -> (pixels: ImageBytes, profile: ProfileOutcome) {
        let stride = width * 4
        let (count, overflow) = stride.multipliedReportingOverflow(by: height)
        let allocation = try memory.allocation(overflow ? -1 : count, for: "the decoded \(width)x\(height) pixels",
                                               format: rawValue, size: declared)
        var message = [CChar](repeating: 0, count: Int(IMGC_MESSAGE_CAPACITY))
        var profile = IMGC_PROFILE_NONE
        let w = CInt(width), h = CInt(height), options = colorProfiles ? CInt(IMGC_DECODE_COLOR_PROFILE) : 0
        let buffer = allocation.base
        let status = message.withUnsafeMutableBufferPointer { text in
            switch self {
            case .jpeg: imgc_jpeg_decode(bytes.baseAddress, bytes.count, w, h, buffer, stride, count, options, &profile, text.baseAddress)
            case .png: imgc_png_decode(bytes.baseAddress, bytes.count, w, h, buffer, stride, count, options, &profile, text.baseAddress)
            case .webp: imgc_webp_decode(bytes.baseAddress, bytes.count, w, h, buffer, stride, count, options, &profile, text.baseAddress)
            case .gif: imgc_gif_decode(bytes.baseAddress, bytes.count, w, h, buffer, stride, count, options, &profile, text.baseAddress)
            }
        }
        try check(status, message, declared: declared)
        let outcome: ProfileOutcome = switch profile {
        case IMGC_PROFILE_APPLIED: .applied
        case IMGC_PROFILE_IGNORED: .ignored(Self.printable(message))
        default: .none
        }
        return (ImageBytes(allocation), outcome)
    }

    /// A C message as printable ASCII: Little CMS may quote a profile's bytes (a tag signature),
    /// which must never reach a terminal raw; anything else becomes `?`.
    static func printable(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { (0x20..<0x7F).contains(UInt8(bitPattern: $0)) ? UInt8(bitPattern: $0) : 0x3F },
               as: UTF8.self)
    }

    /// A C message as text; bytes that are not UTF-8 are replaced.
    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func check(_ status: imgc_status, _ message: [CChar], declared: (width: Int, height: Int)? = nil) throws(DecodingError) {
        guard status != IMGC_OK else { return }
        let text = Self.text(message)
        let kind: DecodingError.Kind = switch status {
        case IMGC_NO_MEMORY: .outOfMemory
        case IMGC_UNSUPPORTED: .unsupportedFeature
        default: .corrupt
        }
        // Memory running out says the image's size (what it needed); the other kinds as before.
        let size = kind == .outOfMemory ? declared : nil
        throw DecodingError(kind: kind, format: rawValue, width: size?.width, height: size?.height, detail: text)
    }
}
