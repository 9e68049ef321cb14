/// An absolute `http` or `https` URL of an image: the only kind the SDK will ever load.
///
/// Validation is strict and needs no Foundation: a scheme of `http` or `https` (any case), `://`,
/// a non-empty host, and no white space or control characters anywhere. Relative URLs,
/// `file://`, `javascript:`, `data:` and the like are rejected.
public struct ImageURL: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The URL exactly as given.
    public let absoluteString: String

    /// Validates `text`, returning nil when it is not an acceptable image URL.
    public init?(_ text: String) {
        guard Self.problem(with: text) == nil else { return nil }
        absoluteString = text
    }

    /// Why `text` is not an acceptable image URL, or nil when it is.
    public static func problem(with text: String) -> String? {
        if text.isEmpty { return "the URL is empty" }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            return "the URL contains white space or control characters"
        }
        guard let colon = text.firstIndex(of: ":") else {
            return "\"\(text)\" is not an absolute URL (only http and https are allowed)"
        }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else {
            let shown = scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) && !scheme.isEmpty
                ? "scheme \"\(scheme)\"" : "\"\(text)\""
            return "\(shown) is not allowed (only http and https)"
        }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { return "\"\(text)\" has no \"//\" after the scheme" }
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        let host: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return "\"\(text)\" has an unclosed IPv6 address" }
            host = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
        } else {
            host = hostAndPort.prefix { $0 != ":" }
        }
        if host.isEmpty { return "\"\(text)\" has no host" }
        return nil
    }

    /// The URL as given.
    public var description: String { absoluteString }

    /// Orders by text, for stable listings.
    public static func < (lhs: ImageURL, rhs: ImageURL) -> Bool { lhs.absoluteString < rhs.absoluteString }
}
