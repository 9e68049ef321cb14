import Support
/// Why an image could not be decoded: the kind, the format when known, the declared size when
/// it was read, and the library's message.
///
/// A public struct over a private code: new kinds may be added without breaking callers; compare
/// `kind` with the static members (`error.kind == .tooLarge`).
public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case unsupportedFormat, corrupt, tooLarge, unsupportedFeature, outOfMemory, cancelled
        }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The bytes are none of JPEG, PNG, WebP, GIF.
        public static let unsupportedFormat = Kind(.unsupportedFormat)
        /// The decoder refused the bytes: truncated, a corrupt header or stream.
        public static let corrupt = Kind(.corrupt)
        /// The declared size exceeds the configured pixel limit (checked before any pixel is decoded).
        public static let tooLarge = Kind(.tooLarge)
        /// A variant this module does not decode (an animated WebP, a CMYK JPEG…).
        public static let unsupportedFeature = Kind(.unsupportedFeature)
        /// The decoder could not allocate memory.
        public static let outOfMemory = Kind(.outOfMemory)
        /// The decode was cancelled before it finished.
        public static let cancelled = Kind(.cancelled)

        /// The kind in a few words (`corrupt or truncated image`), as the one-line message begins.
        public var description: String {
            switch code {
            case .unsupportedFormat: "not a JPEG, PNG, WebP or GIF image"
            case .corrupt: "corrupt or truncated image"
            case .tooLarge: "image too large"
            case .unsupportedFeature: "unsupported image feature"
            case .outOfMemory: "out of memory"
            case .cancelled: "cancelled"
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// The format ("JPEG", "PNG", "WebP", "GIF"), when the bytes were recognised.
    public var format: String?
    /// The declared width and height, when the header was read.
    public var declaredSize: (width: Int, height: Int)? {
        guard let declaredWidth, let declaredHeight else { return nil }
        return (declaredWidth, declaredHeight)
    }
    /// The decoder's own message, or what this module found.
    public var detail: String

    private var declaredWidth: Int?
    private var declaredHeight: Int?

    /// Creates an error.
    public init(kind: Kind, format: String? = nil, width: Int? = nil, height: Int? = nil, detail: String = "") {
        self.kind = kind
        self.format = format
        self.declaredWidth = width
        self.declaredHeight = height
        self.detail = detail
    }

    /// The one-line message: the format, the kind, the declared size and the detail when known
    /// (`png: image too large (50000x50000)`).
    public var description: String {
        var text = kind.description
        if let format { text = "\(format): " + text }
        if let declaredSize { text += " (\(declaredSize.width)x\(declaredSize.height))" }
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }
}
