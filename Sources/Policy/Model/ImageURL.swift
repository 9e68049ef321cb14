import Support

/// An absolute `http` or `https` URL of an image: the only kind the SDK will ever load.
///
/// Validation is strict and needs no Foundation, so that a URL that passes can be fetched and
/// cached, and one that cannot is refused where it is read (naming the file and key), not at
/// fetch time:
/// - a scheme of `http` or `https` (any case), then `://`;
/// - no user information (`user:password@`): credentials in URLs are refused, never stored;
/// - a host that is an ASCII host name (labels of letters, digits and `-`, 1–63 characters, not
///   starting or ending with `-`, 253 characters at most; punycode `xn--` labels are fine; a
///   trailing dot, as in a fully qualified `example.com.`, is allowed), a
///   dotted IPv4 address, or an IPv6 address in brackets; a name whose last label is all digits
///   must be a valid IPv4 address;
/// - an optional port of 1–5 digits, 1–65535;
/// - at most `maximumLength` bytes, and no white space, control characters (C0 and C1) or
///   invisible format characters (bidirectional overrides such as U+202E, zero-width spaces)
///   anywhere: a URL printed in a listing must read as what it is.
///
/// Relative URLs, `file://`, `javascript:`, `data:` and the like are rejected.
public struct ImageURL: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The longest URL accepted, in UTF-8 bytes (8 KiB, what common servers accept in a request line).
    public static let maximumLength = 8 << 10

    /// The URL in its normal form (see `init(_:)`): the cache key, and what is requested.
    public let absoluteString: String

    /// Validates `text`, returning nil when it is not an acceptable image URL.
    ///
    /// The URL is kept in a normal form, so that two spellings of one resource share one cache
    /// entry and one download: the scheme and the host in lower case, the scheme's default port
    /// (`:80` for http, `:443` for https) left out, and the fragment (`#…`, which is never sent to
    /// the server) removed; a port loses its leading zeros. The path and query are kept exactly as
    /// given (they are case-sensitive).
    public init?(_ text: String) {
        guard Self.problem(with: text) == nil else { return nil }
        absoluteString = Self.normalized(text)
    }

    /// `text` (already validated) in normal form.
    static func normalized(_ text: String) -> String {
        var text = Substring(text)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        guard let colon = text.firstIndex(of: ":") else { return String(text) }
        let scheme = text[..<colon].lowercased()
        let afterSlashes = text.index(colon, offsetBy: 3)   // "://" was checked by `problem(with:)`
        let authorityEnd = text[afterSlashes...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
        var authority = text[afterSlashes..<authorityEnd].lowercased()
        // The port without leading zeros (`:080` is `:80`), then without the scheme's default.
        let hostEnd = authority.lastIndex(of: "]") ?? authority.startIndex
        if let colon = authority[hostEnd...].lastIndex(of: ":") {
            let digits = authority[authority.index(after: colon)...].drop { $0 == "0" }
            let port = digits.isEmpty ? "0" : String(digits)
            authority = String(authority[..<colon])
            if port != (scheme == "https" ? "443" : "80") { authority += ":" + port }
        }
        // Appended one by one, each a String or a Substring: `String + Substring` is the generic
        // `RangeReplaceableCollection` operator, whose first use searches the conformances at run
        // time (docs/startup.md).
        var normal = scheme
        normal += "://"
        normal += authority
        normal.append(contentsOf: text[authorityEnd...])
        return normal
    }

    /// Why `text` is not an acceptable image URL, or nil when it is. The message never repeats
    /// user information (a password) from the URL.
    public static func problem(with text: String) -> String? {
        if text.isEmpty { return "the URL is empty" }
        if text.utf8.count > maximumLength {
            return "the URL is \(text.utf8.count) bytes long, longer than the limit of \(maximumLength)"
        }
        if containsWhiteSpaceOrControl(text) {
            return "the URL contains white space or control characters (or invisible format characters)"
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
        if authority.contains("@") {
            return "the URL holds user information (user:password@ before the host): credentials in URLs are not accepted"
        }
        return authorityProblem(authority)
    }

    /// Whether `text` holds a white-space, control (C0, DEL, C1) or format (`Cf`: bidirectional
    /// overrides, zero-width characters) character. Byte by byte while the text is ASCII (the
    /// usual URL); Unicode's properties only for the rest, as reading them costs hundreds of
    /// instructions a character (docs/startup.md).
    private static func containsWhiteSpaceOrControl(_ text: String) -> Bool {
        var isASCII = true
        for byte in text.utf8 {
            if byte >= 0x80 { isASCII = false; break }
            if byte <= 0x20 || byte == 0x7F { return true }   // controls, space; 0x09-0x0D are both
        }
        if isASCII { return false }
        return text.unicodeScalars.contains { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.isWhitespace
                || scalar.properties.generalCategory == .format
        }
    }

    /// Why the host and port part is wrong, or nil.
    private static func authorityProblem(_ authority: Substring) -> String? {
        let host: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "the host has an unclosed IPv6 address" }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                portText = nil
            } else if after.first == ":" {
                portText = after.dropFirst()
            } else {
                return "unexpected text after the IPv6 address"
            }
            if host.isEmpty { return "the URL has no host" }
            guard isIPAddress(host, family: AF_INET6) else { return "the host [\(host)] is not a valid IPv6 address" }
        } else {
            if let portColon = authority.firstIndex(of: ":") {
                host = authority[..<portColon]
                portText = authority[authority.index(after: portColon)...]
            } else {
                host = authority
                portText = nil
            }
            if host.isEmpty { return "the URL has no host" }
            if let problem = hostNameProblem(host) { return problem }
        }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let port = Int(portText), (1...65535).contains(port) else {
                return "the port \"\(portText)\" is not a number from 1 to 65535"
            }
        }
        return nil
    }

    /// Why `host` is neither an ASCII host name nor an IPv4 address, or nil.
    private static func hostNameProblem(_ host: Substring) -> String? {
        guard host.utf8.allSatisfy({ $0 < 0x80 }) else {
            return "the host \"\(host)\" is not ASCII (write an international name in punycode, xn--…)"
        }
        guard host.utf8.count <= 253 else { return "the host is longer than 253 characters" }
        // A fully qualified name may end with a dot (`example.com.`).
        let qualified = host.count > 1 && host.last == "." ? host.dropLast() : host
        let labels = qualified.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            let bytes = label.utf8
            let valid = !bytes.isEmpty && bytes.count <= 63 && bytes.first != UInt8(ascii: "-") && bytes.last != UInt8(ascii: "-")
                && bytes.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
            guard valid else {
                return "the host \"\(host)\" is not a valid host name (labels of letters, digits and \"-\", separated by dots)"
            }
        }
        // A host whose last label is a number (decimal, or hexadecimal after 0x) is an IPv4
        // address to libcurl and to browsers (`0x7f000001`, `127.1`, `1.2.3.0x4` all reach an
        // address): it must be a dotted quad, else two spellings of one address would pass.
        if let last = labels.last, Self.isNumber(last), !isIPAddress(qualified, family: AF_INET) {
            return "the host \"\(host)\" is not a valid IPv4 address (only a dotted quad such as 127.0.0.1)"
        }
        return nil
    }

    /// Whether `label` reads as a number: decimal digits, or `0x`/`0X` and hexadecimal digits.
    private static func isNumber(_ label: Substring) -> Bool {
        let bytes = Array(label.utf8)
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "0"), bytes[1] | 0x20 == UInt8(ascii: "x") {
            return bytes.dropFirst(2).allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
        }
        return !bytes.isEmpty && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// Whether `text` is an address of `family` as `inet_pton` reads it (dotted quad; IPv6 without zone).
    private static func isIPAddress(_ text: Substring, family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return String(text).withCString { inet_pton(family, $0, &buffer) } == 1
    }

    /// The URL as given.
    public var description: String { absoluteString }

    /// Orders by text, for stable listings.
    public static func < (lhs: ImageURL, rhs: ImageURL) -> Bool { lhs.absoluteString < rhs.absoluteString }
}
