import Support
/// The widths an item's image is offered at, narrowest first: a list of rungs (an HTML `srcset`
/// with width descriptors) or a URL template with a `{width}` placeholder and the widths the
/// server offers (an image CDN: `https://cdn.example.com/p/42.jpg?w={width}`).
///
/// A ladder is valid by construction: 1 to ``maximumRungs`` rungs, widths from 1 to
/// ``ImageItem/maximumWidth`` and distinct, URLs valid (a template's once expanded), sizes in
/// bytes positive when given. An item's `original` and `thumbnail` are the two-rung case: an item
/// file that gives a ladder without them gets its widest rung as the original and its narrowest
/// as the thumbnail (docs/ladders.md).
///
/// ```swift
/// let ladder = try ImageLadder(template: "https://cdn.example.com/p/42.jpg?w={width}",
///                              widths: [160, 320, 640, 1280])
/// ladder.rung(covering: 400).width   // 640: the narrowest that covers 400 pixels
/// ```
public struct ImageLadder: Sendable, Hashable {
    /// The most rungs a ladder may have (CDNs' width lists and `srcset`s hold far fewer).
    public static let maximumRungs = 32
    /// The placeholder a template holds exactly once.
    public static let widthPlaceholder = "{width}"

    /// The rungs, narrowest first.
    public let rungs: [ImageRung]
    /// The template the rungs were made from, if any.
    public let template: String?

    /// Why a ladder cannot be made: what is wrong, in words that name the rung or the value.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// `the widths 320 and 320 are the same`, `rung 3: "url": …`.
        public var description: String
    }

    /// A ladder of `rungs` (in any order; kept narrowest first).
    ///
    /// - Throws: ``Problem`` when there is no rung or more than ``maximumRungs``, a width out of
    ///   1…``ImageItem/maximumWidth``, two rungs of one width, or a size in bytes below 1.
    public init(rungs: [ImageRung]) throws(Problem) {
        try Self.check(count: rungs.count)
        for (position, rung) in rungs.enumerated() {
            try Self.check(width: rung.width, at: "rung \(position + 1)")
            if let bytes = rung.bytes, bytes < 1 {
                throw Problem(description: "rung \(position + 1): \"bytes\" must be at least 1, found \(bytes)")
            }
        }
        self.rungs = try Self.sortedDistinct(rungs)
        template = nil
    }

    /// A ladder of the URLs `template` makes for each of `widths` (`{width}` replaced by the
    /// width in decimal), narrowest first.
    ///
    /// - Throws: ``Problem`` when the template does not hold ``widthPlaceholder`` exactly once, a
    ///   URL it makes is not valid, or the widths break the rules of ``init(rungs:)``.
    public init(template: String, widths: [Int]) throws(Problem) {
        // Found in the bytes, not among characters: "{width}" followed by a combining mark is
        // still the placeholder (a character split would not see it, or see one too few).
        let parts = Self.split(template, at: Self.widthPlaceholder)
        guard parts.count == 2 else {
            throw Problem(description: parts.count == 1
                ? "the template holds no \(Self.widthPlaceholder) placeholder"
                : "the template holds \(Self.widthPlaceholder) \(parts.count - 1) times; it must hold it once")
        }
        if parts[0].utf8.contains(UInt8(ascii: "#")) {
            throw Problem(description: "the \(Self.widthPlaceholder) placeholder is in the fragment (after #), which is never sent to the server: every width would be one URL")
        }
        try Self.check(count: widths.count)
        var rungs: [ImageRung] = []
        rungs.reserveCapacity(widths.count)
        for (position, width) in widths.enumerated() {
            try Self.check(width: width, at: "width \(position + 1)")
            let text = parts[0] + String(width) + parts[1]
            // Checked once: the problem is worked out only for a URL that is refused.
            guard let url = ImageURL(text) else {
                throw Problem(description: "the template makes an invalid URL for width \(width): \(ImageURL.problem(with: text) ?? "not a URL")")
            }
            rungs.append(ImageRung(url: url, width: width))
        }
        self.rungs = try Self.sortedDistinct(rungs)
        self.template = template
    }

    /// The narrowest rung.
    public var narrowest: ImageRung { rungs[0] }
    /// The widest rung.
    public var widest: ImageRung { rungs[rungs.count - 1] }

    /// The narrowest rung at least `width` pixels wide, or nil when none is.
    public func smallestRung(covering width: Int) -> ImageRung? {
        rungs.first { $0.width >= width }
    }

    /// The narrowest rung at least `width` pixels wide, else the widest: the rung that shows a
    /// display `width` pixels wide best for the fewest bytes.
    public func rung(covering width: Int) -> ImageRung {
        smallestRung(covering: width) ?? widest
    }

    /// The rung served at `url`, if one is.
    public func rung(at url: ImageURL) -> ImageRung? {
        rungs.first { $0.url == url }
    }

    private static func check(count: Int) throws(Problem) {
        guard count > 0 else { throw Problem(description: "a ladder needs at least one rung") }
        guard count <= maximumRungs else {
            throw Problem(description: "\(count) rungs, more than the limit of \(maximumRungs)")
        }
    }

    private static func check(width: Int, at place: String) throws(Problem) {
        guard (1...ImageItem.maximumWidth).contains(width) else {
            throw Problem(description: "\(place): the width must be a whole number of pixels from 1 to \(ImageItem.maximumWidth), found \(width)")
        }
    }

    private static func sortedDistinct(_ rungs: [ImageRung]) throws(Problem) -> [ImageRung] {
        let sorted = rungs.sorted { $0.width < $1.width }
        for (narrower, wider) in zip(sorted, sorted.dropFirst()) where narrower.width == wider.width {
            throw Problem(description: "two rungs are \(wider.width) pixels wide; widths must be distinct")
        }
        // One URL for two widths (written twice, or differing only after #, which is dropped)
        // would download one body for both: the narrow rung would be the wide image.
        var seen: [ImageURL: Int] = [:]
        for rung in sorted {
            if let other = seen.updateValue(rung.width, forKey: rung.url) {
                throw Problem(description: "the rungs of \(other) and \(rung.width) pixels have one URL (\(rung.url)); each width needs its own")
            }
        }
        return sorted
    }

    /// `text` cut at each occurrence of `separator`, compared byte by byte (UTF-8).
    private static func split(_ text: String, at separator: String) -> [String] {
        let bytes = Array(text.utf8), needle = Array(separator.utf8)
        var parts: [String] = [], rest = bytes[...]
        while let found = rest.firstRange(ofBytes: needle) {
            parts.append(String(decoding: rest[..<found.lowerBound], as: UTF8.self))
            rest = rest[found.upperBound...]
        }
        parts.append(String(decoding: rest, as: UTF8.self))
        return parts
    }
}
