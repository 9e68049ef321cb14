import Support
/// What a response says about how long it may be reused and how to check it again: its
/// validators (`ETag`, `Last-Modified`), its freshness (`Cache-Control`, `Expires`, `Age`, `Date`)
/// and when it was requested and received. Pure: every answer is computed from these values and
/// a moment given by the caller (RFC 9111, as a private cache).
///
/// ```swift
/// let freshness = HTTPFreshness(status: 200, headers: [("ETag", #""v1""#), ("Cache-Control", "max-age=60")],
///                               requestedAt: sent, receivedAt: received)
/// switch freshness.state(at: .now()) {
/// case .fresh: show(bytes)                        // no request at all
/// case .stale: show(bytes); revalidate(with: freshness.conditionalHeaders)
/// case .mustRevalidate: revalidate(with: freshness.conditionalHeaders)
/// case .neverStore: break                         // no-store: never written to disk
/// }
/// // After a 304 Not Modified: the stored bytes stay, the freshness is renewed.
/// let renewed = freshness.refreshed(byNotModified: headersOf304, requestedAt: sent2, receivedAt: received2)
/// ```
///
/// - **Freshness lifetime** (RFC 9111 §4.2.1): `max-age`, else `Expires` minus `Date`, else the
///   rules' `defaultLifetime` (7 days by default, as Kingfisher). `s-maxage` is ignored (this is a
///   private cache). There is no `Last-Modified` heuristic: a response without `max-age` or
///   `Expires` stays fresh for the default lifetime, whatever its `Last-Modified`.
/// - **Current age** (§4.2.3): the corrected initial age (from `Age`, `Date` and the request's
///   round trip) plus the time since it was received; a clock that went backwards counts as 0.
/// - **Hostile values never trap**: delta-seconds above 2^31 are 2^31 (§1.2.2); a negative or
///   garbage `max-age` makes the response stale; an invalid `Expires` (`0`, garbage) is already
///   expired (§5.3); a garbage `Age` or `Date` is ignored; duplicates that disagree (two
///   `max-age`s, two `Expires`, two `ETag`s…) make the response stale or drop the validator; all
///   arithmetic saturates.
/// - `no-cache` (qualified or not) and `must-revalidate` once stale: `.mustRevalidate`;
///   `no-store`: `.neverStore`; `stale-while-revalidate=N`: stale for at most N seconds past its
///   lifetime is `.stale(withinStaleWhileRevalidate: true)`. `immutable` (RFC 8246) is kept
///   (`isImmutable`): a fresh immutable response needs no revalidation even on a reload.
public struct HTTPFreshness: Sendable, Hashable {
    /// The response's status code (only 200 and 203 responses are stored).
    public var status: Int
    /// `ETag`, when valid and at most `EntityTag.longest` bytes.
    public var entityTag: EntityTag?
    /// `Last-Modified`, when a valid HTTP date.
    public var lastModified: HTTPDate?
    /// `Date`, when a valid HTTP date (else the time received stands for it).
    public var date: HTTPDate?
    /// `Expires`; an invalid one is stored as 1970-01-01 (already expired).
    public var expires: HTTPDate?
    /// `Age`, in seconds (0 when absent or invalid).
    public var age: Int64
    /// `Cache-Control: max-age`, in seconds (0 when invalid or given twice with different values).
    public var maxAge: Int64?
    /// `Cache-Control: stale-while-revalidate`, in seconds.
    public var staleWhileRevalidate: Int64?
    /// `Cache-Control: no-cache`: every use needs a successful revalidation first.
    public var noCache: Bool
    /// `Cache-Control: no-store`: never written to disk.
    public var noStore: Bool
    /// `Cache-Control: must-revalidate`: once stale, never used without revalidation.
    public var mustRevalidate: Bool
    /// `Cache-Control: immutable`: while fresh, not revalidated even on a reload.
    public var isImmutable: Bool
    /// When the request was sent.
    public var requestedAt: HTTPDate
    /// When the response was received.
    public var receivedAt: HTTPDate

    /// Choices RFC 9111 leaves to the cache.
    public struct Rules: Sendable, Hashable {
        /// How long a response without `max-age` or `Expires` stays fresh, in seconds (7 days by
        /// default, as Kingfisher's disk cache).
        public var defaultLifetime: Int64

        /// Rules with `defaultLifetime` (clamped to 0 or more).
        public init(defaultLifetime: Int64 = 7 * 86_400) {
            self.defaultLifetime = max(0, defaultLifetime)
        }

        /// A default lifetime of 7 days.
        public static let `default` = Rules()
    }

    /// What to do with a stored response at a given moment.
    public enum State: Sendable, Hashable {
        /// Use it as it is: no request.
        case fresh
        /// Past its lifetime: it may be shown (the policy decides: offline, roaming…) and should
        /// be revalidated; `withinStaleWhileRevalidate` when the response allows showing it while
        /// revalidating in the background.
        case stale(withinStaleWhileRevalidate: Bool)
        /// Never use it before a successful revalidation (`no-cache`, or stale with `must-revalidate`).
        case mustRevalidate
        /// `no-store` (or a status that is not stored): never written to disk.
        case neverStore
    }

    /// The largest delta-seconds value (RFC 9111 §1.2.2): larger ones are taken as this.
    public static let largestDeltaSeconds: Int64 = 1 << 31

    /// A response's freshness from its status and header fields (names case-insensitive; several
    /// lines of `Cache-Control` are one list), sent at `requestedAt` (default: `receivedAt`) and
    /// received at `receivedAt`.
    public init(status: Int, headers: [(name: String, value: String)], requestedAt: HTTPDate? = nil, receivedAt: HTTPDate) {
        let fields = Fields(headers)
        self.status = status
        entityTag = fields.entityTag
        lastModified = fields.lastModified
        date = fields.date
        expires = fields.expires
        age = fields.age ?? 0
        let directives = fields.directives
        maxAge = directives.maxAge
        staleWhileRevalidate = directives.staleWhileRevalidate
        noCache = directives.noCache
        noStore = directives.noStore
        mustRevalidate = directives.mustRevalidate
        isImmutable = directives.immutable
        self.requestedAt = min(requestedAt ?? receivedAt, receivedAt)
        self.receivedAt = receivedAt
    }

    /// An entry without any HTTP information (written before entries kept their freshness, or
    /// stored without headers): a 200 received at `writtenAt`, fresh for the default lifetime.
    public init(storedAt writtenAt: HTTPDate) {
        self.init(status: 200, headers: [], receivedAt: writtenAt)
    }

    // MARK: - Answers

    /// Whether the response may be written to disk: a 200 or 203 without `no-store`.
    public var isStorable: Bool { !noStore && (status == 200 || status == 203) }

    /// How long the response is fresh after it was generated, in seconds (§4.2.1).
    public func freshnessLifetime(rules: Rules = .default) -> Int64 {
        if let maxAge { return maxAge }
        if let expires { return max(0, expires.seconds(since: date ?? receivedAt)) }
        return rules.defaultLifetime
    }

    /// The response's age at `now`, in seconds (§4.2.3).
    public func currentAge(at now: HTTPDate) -> Int64 {
        let apparentAge = max(0, receivedAt.seconds(since: date ?? receivedAt))
        let responseDelay = max(0, receivedAt.seconds(since: requestedAt))
        let correctedInitialAge = max(apparentAge, Saturating.add(age, responseDelay))
        let residentTime = max(0, now.seconds(since: receivedAt))
        return Saturating.add(correctedInitialAge, residentTime)
    }

    /// What to do with the stored response at `now`.
    public func state(at now: HTTPDate, rules: Rules = .default) -> State {
        guard isStorable else { return .neverStore }
        if noCache { return .mustRevalidate }
        let lifetime = freshnessLifetime(rules: rules)
        let currentAge = currentAge(at: now)
        if lifetime > currentAge { return .fresh }
        if mustRevalidate { return .mustRevalidate }
        let window = staleWhileRevalidate ?? 0
        return .stale(withinStaleWhileRevalidate: window > 0 && Saturating.add(lifetime, window) > currentAge)
    }

    /// Seconds the response stays fresh after `now` (0 when it is not fresh).
    public func remainingLifetime(at now: HTTPDate, rules: Rules = .default) -> Int64 {
        max(0, Saturating.subtract(freshnessLifetime(rules: rules), currentAge(at: now)))
    }

    // MARK: - Validation

    /// The fields that make a request conditional (RFC 9110 §13.1): `If-None-Match` with the
    /// entity tag (weak ones too), `If-Modified-Since` with `Last-Modified`. Empty when the
    /// response had no validator (then it can only be fetched again).
    public var conditionalHeaders: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let entityTag { fields.append(("If-None-Match", entityTag.headerValue)) }
        if let lastModified { fields.append(("If-Modified-Since", lastModified.formatted)) }
        return fields
    }

    /// The validator for `If-Range` (RFC 9110 §13.1.5), which must be strong: a strong entity tag,
    /// else `Last-Modified` when `Date` is at least one second after it (§8.8.2.2); else nil (a
    /// partial body of this response cannot be resumed safely).
    public var rangeValidator: String? {
        if let entityTag, !entityTag.isWeak { return entityTag.headerValue }
        if let lastModified, let date, date.seconds(since: lastModified) >= 1 { return lastModified.formatted }
        return nil
    }

    /// The freshness after a `304 Not Modified` carrying `headers` (RFC 9111 §4.3.4), or nil when
    /// the 304 is not about this response (its validators do not match: the caller then fetches
    /// without conditions; the stored bytes are never shown for another representation).
    ///
    /// Matching: a strong `ETag` in the 304 must strongly match the stored one; a weak one must
    /// weakly match; without an `ETag`, a `Last-Modified` in the 304 must equal the stored one;
    /// a 304 with neither matches. Merging: the 304's `ETag`, `Last-Modified`, `Expires` and
    /// `Cache-Control` (all its directives at once) replace the stored ones when present; `Date`
    /// and `Age` describe the 304 itself (kept from it, or none); the times are the 304's. The
    /// status stays the stored one.
    public func refreshed(byNotModified headers: [(name: String, value: String)], requestedAt: HTTPDate? = nil,
                          receivedAt: HTTPDate) -> HTTPFreshness? {
        let fields = Fields(headers)
        if let tag = fields.entityTag {
            guard let stored = entityTag, tag.isWeak ? tag.weakMatch(stored) : tag.strongMatch(stored) else { return nil }
        } else if fields.present.contains("etag") {
            return nil  // an ETag that is not one (or several that disagree) matches nothing
        } else if let modified = fields.lastModified {
            guard modified == lastModified else { return nil }
        }
        var renewed = self
        if fields.present.contains("etag") { renewed.entityTag = fields.entityTag }
        if fields.present.contains("last-modified") { renewed.lastModified = fields.lastModified }
        if fields.present.contains("expires") { renewed.expires = fields.expires }
        if fields.present.contains("cache-control") {
            let directives = fields.directives
            renewed.maxAge = directives.maxAge
            renewed.staleWhileRevalidate = directives.staleWhileRevalidate
            renewed.noCache = directives.noCache
            renewed.noStore = directives.noStore
            renewed.mustRevalidate = directives.mustRevalidate
            renewed.isImmutable = directives.immutable
        }
        renewed.date = fields.date
        renewed.age = fields.age ?? 0
        renewed.requestedAt = min(requestedAt ?? receivedAt, receivedAt)
        renewed.receivedAt = receivedAt
        return renewed
    }
}

// MARK: - Parsing header fields

extension HTTPFreshness {
    /// The fields that matter, parsed from name/value pairs.
    struct Fields {
        /// Lower-cased names seen.
        var present: Set<String> = []
        var entityTag: EntityTag?
        var lastModified: HTTPDate?
        var date: HTTPDate?
        var expires: HTTPDate?
        var age: Int64?
        var directives = Directives()

        init(_ headers: [(name: String, value: String)]) {
            var values: [String: [String]] = [:]
            for (name, value) in headers.prefix(1000) {
                let key = name.lowercased()
                guard ["etag", "last-modified", "date", "expires", "age", "cache-control"].contains(key) else { continue }
                present.insert(key)
                values[key, default: []].append(value)
            }
            // A single-valued field given several different values is ambiguous.
            func single(_ key: String) -> String? {
                guard let all = values[key], let first = all.first else { return nil }
                return all.allSatisfy { $0 == first } ? first : nil
            }
            entityTag = single("etag").flatMap { EntityTag(parsing: $0) }
            lastModified = single("last-modified").flatMap { HTTPDate(parsing: $0) }
            date = single("date").flatMap { HTTPDate(parsing: $0) }
            if values["expires"] != nil {
                // Invalid or ambiguous: already expired (RFC 9111 §5.3).
                expires = single("expires").flatMap { HTTPDate(parsing: $0) } ?? HTTPDate(secondsSince1970: 0)
            }
            // Age: the first member of the first line; an invalid one is ignored (§5.1).
            if let first = values["age"]?.first, let member = first.split(separator: ",", omittingEmptySubsequences: false).first {
                age = Directives.deltaSeconds(member)
            }
            directives = Directives(values["cache-control"] ?? [])
        }
    }

    /// The `Cache-Control` directives that matter to a private cache.
    struct Directives {
        var maxAge: Int64?
        var staleWhileRevalidate: Int64?
        var noCache = false
        var noStore = false
        var mustRevalidate = false
        var immutable = false

        init() {}

        init(_ lines: [String]) {
            var maxAges: [Int64] = []
            var windows: [Int64] = []
            for line in lines.prefix(100) {
                for (name, argument) in Self.split(line) {
                    switch name {
                    // A missing or invalid argument: 0, so stale (RFC 9111 §4.2.1).
                    case "max-age": maxAges.append(argument.flatMap(Self.deltaSeconds) ?? 0)
                    case "stale-while-revalidate": windows.append(argument.flatMap(Self.deltaSeconds) ?? 0)
                    case "no-cache": noCache = true
                    case "no-store": noStore = true
                    case "must-revalidate": mustRevalidate = true
                    case "immutable": immutable = true
                    default: break  // s-maxage, private, public, proxy-revalidate…: not for a private cache
                    }
                }
            }
            if let first = maxAges.first { maxAge = maxAges.allSatisfy { $0 == first } ? first : 0 }
            if let first = windows.first { staleWhileRevalidate = windows.allSatisfy { $0 == first } ? first : 0 }
        }

        /// Non-negative decimal seconds, at most 2^31; nil for anything else (quotes are allowed).
        static func deltaSeconds(_ text: some StringProtocol) -> Int64? {
            var utf8 = Array(text.utf8)[...]
            while let first = utf8.first, first == 0x20 || first == 0x09 { utf8 = utf8.dropFirst() }
            while let last = utf8.last, last == 0x20 || last == 0x09 { utf8 = utf8.dropLast() }
            if utf8.count >= 2, utf8.first == 0x22, utf8.last == 0x22 { utf8 = utf8.dropFirst().dropLast() }
            guard !utf8.isEmpty, utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            var value: Int64 = 0
            for digit in utf8 {
                value = value * 10 + Int64(digit - 0x30)
                if value >= HTTPFreshness.largestDeltaSeconds { return HTTPFreshness.largestDeltaSeconds }
            }
            return value
        }

        /// `name[=token|"quoted"]` items of a list, names lower-cased; commas inside quotes kept.
        static func split(_ line: String) -> [(name: String, argument: String?)] {
            var items: [(String, String?)] = []
            var current: [UInt8] = []
            var quoted = false
            var escaped = false
            func finish() {
                let text = String(decoding: current, as: UTF8.self)
                current = []
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingSpaces.lowercased()
                guard !name.isEmpty else { return }
                items.append((name, parts.count > 1 ? String(parts[1].trimmingSpaces) : nil))
            }
            for byte in line.utf8.prefix(8192) {
                if escaped {
                    escaped = false
                } else if quoted && byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    quoted.toggle()
                } else if byte == 0x2C && !quoted {
                    finish()
                    continue
                }
                current.append(byte)
            }
            finish()
            return items
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
