import Fetch
import Testing
import TestSupport

/// The freshness model (RFC 9111 as a private cache), as scenario tables: no disk, no clock.
struct HTTPFreshnessTests {
    static let received = HTTPDate(parsing: "Mon, 23 Nov 2026 12:00:00 GMT")!
    static let imf = "Mon, 23 Nov 2026 12:00:00 GMT"

    // MARK: - HTTP dates

    struct DateCase: Sendable, CustomTestStringConvertible {
        var text: String
        var seconds: Int64?
        var testDescription: String { text }
    }

    @Test(arguments: [
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 GMT", seconds: 784_111_777),
        DateCase(text: "Sunday, 06-Nov-94 08:49:37 GMT", seconds: 784_111_777),
        DateCase(text: "Sun Nov  6 08:49:37 1994", seconds: 784_111_777),
        DateCase(text: "  Sun, 06 Nov 1994 08:49:37 GMT ", seconds: 784_111_777),
        DateCase(text: "Thu, 01 Jan 1970 00:00:00 GMT", seconds: 0),
        DateCase(text: "Tue, 29 Feb 2000 23:59:59 GMT", seconds: 951_868_799),
        DateCase(text: "Fri, 31 Dec 9999 23:59:59 GMT", seconds: 253_402_300_799),
        DateCase(text: "Wed, 31 Dec 2025 23:59:60 GMT", seconds: 1_767_225_599),  // a leap second: :59
        DateCase(text: "0", seconds: nil),
        DateCase(text: "", seconds: nil),
        DateCase(text: "-1", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 UTC", seconds: nil),
        DateCase(text: "Sun, 6 Nov 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 30 Feb 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 24:00:00 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 99999 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Foo 1994 08:49:37 GMT", seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 8:49:37 GMT", seconds: nil),
        DateCase(text: String(repeating: "Sun, ", count: 1000), seconds: nil),
        DateCase(text: "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", seconds: nil),
    ])
    func httpDatesParseTheThreeFormatsAndRefuseAnythingElse(_ scenario: DateCase) {
        #expect(HTTPDate(parsing: scenario.text)?.secondsSince1970 == scenario.seconds)
    }

    @Test(arguments: [Int64(784_111_777), 0, -1, 951_868_799, 1_767_225_599, 253_402_300_799])
    func formattedDatesParseBack(_ seconds: Int64) {
        let date = HTTPDate(secondsSince1970: seconds)
        #expect(HTTPDate(parsing: date.formatted) == date, "\(date.formatted)")
    }

    @Test func formattingIsIMFFixdate() {
        #expect(HTTPDate(secondsSince1970: 784_111_777).formatted == "Sun, 06 Nov 1994 08:49:37 GMT")
        // Out of range: clamped, never a trap.
        #expect(HTTPDate(secondsSince1970: .max).formatted == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate(secondsSince1970: .min).formatted == "Sat, 01 Jan 0000 00:00:00 GMT")
    }

    // MARK: - Freshness

    struct StateCase: Sendable, CustomTestStringConvertible {
        var name: String
        var status = 200
        var headers: [(name: String, value: String)]
        /// Seconds after `received` at which the state is asked.
        var after: Int64
        var expected: HTTPFreshness.State
        var lifetime: Int64? = nil
        var testDescription: String { name }
    }

    static let day: Int64 = 86_400

    static let stateCases: [StateCase] = [
        StateCase(name: "no information: fresh for the default 7 days", headers: [], after: 7 * day - 1, expected: .fresh, lifetime: 7 * day),
        StateCase(name: "no information: stale after 7 days", headers: [], after: 7 * day, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "Last-Modified alone: no heuristic, the default lifetime", headers: [("Last-Modified", "Mon, 23 Nov 2026 11:59:00 GMT")], after: 6 * day, expected: .fresh, lifetime: 7 * day),
        StateCase(name: "max-age=60 at 59 s", headers: [("Cache-Control", "max-age=60")], after: 59, expected: .fresh, lifetime: 60),
        StateCase(name: "max-age=60 at 60 s", headers: [("Cache-Control", "max-age=60")], after: 60, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "names and directives are case-insensitive", headers: [("CACHE-control", "Max-Age=60")], after: 30, expected: .fresh, lifetime: 60),
        StateCase(name: "max-age quoted", headers: [("Cache-Control", #"max-age="60""#)], after: 30, expected: .fresh, lifetime: 60),
        StateCase(name: "max-age=0", headers: [("Cache-Control", "max-age=0")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "max-age huge: 2^31", headers: [("Cache-Control", "max-age=99999999999999999999999999")], after: 1 << 30, expected: .fresh, lifetime: 1 << 31),
        StateCase(name: "max-age negative: stale", headers: [("Cache-Control", "max-age=-5")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "max-age garbage: stale", headers: [("Cache-Control", "max-age=ten")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "max-age without a value: stale", headers: [("Cache-Control", "max-age")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "two different max-age: stale", headers: [("Cache-Control", "max-age=60, max-age=3600")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "the same max-age twice, on two lines", headers: [("Cache-Control", "max-age=60"), ("Cache-Control", "max-age=60")], after: 30, expected: .fresh, lifetime: 60),
        StateCase(name: "s-maxage is ignored (private cache)", headers: [("Cache-Control", "s-maxage=0, max-age=60")], after: 30, expected: .fresh, lifetime: 60),
        StateCase(name: "s-maxage alone: the default lifetime", headers: [("Cache-Control", "s-maxage=5")], after: 60, expected: .fresh, lifetime: 7 * day),
        StateCase(name: "max-age wins over Expires", headers: [("Cache-Control", "max-age=60"), ("Expires", "Mon, 23 Nov 2026 13:00:00 GMT"), ("Date", imf)], after: 120, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 60),
        StateCase(name: "Expires minus Date", headers: [("Expires", "Mon, 23 Nov 2026 13:00:00 GMT"), ("Date", imf)], after: 3599, expected: .fresh, lifetime: 3600),
        StateCase(name: "Expires in the past", headers: [("Expires", "Mon, 23 Nov 2026 11:00:00 GMT"), ("Date", imf)], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "Expires 0: already expired", headers: [("Expires", "0")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "Expires garbage: already expired", headers: [("Expires", "soon")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "two different Expires: already expired", headers: [("Expires", "Mon, 23 Nov 2026 13:00:00 GMT"), ("Expires", "Mon, 23 Nov 2026 14:00:00 GMT")], after: 0, expected: .stale(withinStaleWhileRevalidate: false), lifetime: 0),
        StateCase(name: "Age counts", headers: [("Cache-Control", "max-age=60"), ("Age", "50")], after: 9, expected: .fresh),
        StateCase(name: "Age counts: stale", headers: [("Cache-Control", "max-age=60"), ("Age", "50")], after: 10, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "Age list: the first member", headers: [("Cache-Control", "max-age=60"), ("Age", "50, 0")], after: 10, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "Age garbage is ignored", headers: [("Cache-Control", "max-age=60"), ("Age", "-50")], after: 30, expected: .fresh),
        StateCase(name: "Age huge never traps", headers: [("Cache-Control", "max-age=60"), ("Age", "9223372036854775807999")], after: .max, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "a Date in the past makes it older", headers: [("Cache-Control", "max-age=60"), ("Date", "Mon, 23 Nov 2026 11:59:30 GMT")], after: 30, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "a Date in the future is no younger", headers: [("Cache-Control", "max-age=60"), ("Date", "Mon, 23 Nov 2026 13:00:00 GMT")], after: 59, expected: .fresh),
        StateCase(name: "garbage Date: the time received", headers: [("Cache-Control", "max-age=60"), ("Date", "yesterday")], after: 59, expected: .fresh),
        StateCase(name: "a clock gone backwards: age 0", headers: [("Cache-Control", "max-age=60")], after: -1_000, expected: .fresh),
        StateCase(name: "no-store: never stored", headers: [("Cache-Control", "max-age=600, no-store")], after: 0, expected: .neverStore),
        StateCase(name: "NO-STORE on a second line", headers: [("Cache-Control", "max-age=600"), ("cache-control", "NO-STORE")], after: 0, expected: .neverStore),
        StateCase(name: "a 404 is never stored", status: 404, headers: [], after: 0, expected: .neverStore),
        StateCase(name: "a 206 is never stored as an entry", status: 206, headers: [], after: 0, expected: .neverStore),
        StateCase(name: "203 is stored", status: 203, headers: [], after: 0, expected: .fresh),
        StateCase(name: "no-cache: always revalidated", headers: [("Cache-Control", "no-cache, max-age=600")], after: 0, expected: .mustRevalidate),
        StateCase(name: "qualified no-cache counts as no-cache", headers: [("Cache-Control", #"no-cache="Set-Cookie, X-Foo", max-age=600"#)], after: 0, expected: .mustRevalidate),
        StateCase(name: "a comma in quotes is no separator", headers: [("Cache-Control", #"private="a, no-store", max-age=60"#)], after: 0, expected: .fresh),
        StateCase(name: "must-revalidate while fresh", headers: [("Cache-Control", "max-age=60, must-revalidate")], after: 10, expected: .fresh),
        StateCase(name: "must-revalidate once stale", headers: [("Cache-Control", "max-age=60, must-revalidate")], after: 60, expected: .mustRevalidate),
        StateCase(name: "stale-while-revalidate window", headers: [("Cache-Control", "max-age=60, stale-while-revalidate=30")], after: 89, expected: .stale(withinStaleWhileRevalidate: true)),
        StateCase(name: "past stale-while-revalidate", headers: [("Cache-Control", "max-age=60, stale-while-revalidate=30")], after: 90, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "stale-while-revalidate huge never traps", headers: [("Cache-Control", "max-age=2147483648, stale-while-revalidate=99999999999999999999")], after: .max, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "immutable while fresh", headers: [("Cache-Control", "max-age=31536000, immutable")], after: 1_000, expected: .fresh),
        StateCase(name: "immutable is stale past its lifetime", headers: [("Cache-Control", "max-age=60, immutable")], after: 61, expected: .stale(withinStaleWhileRevalidate: false)),
        StateCase(name: "garbage Cache-Control is ignored", headers: [("Cache-Control", ",,,=,\"\"\",=max-age")], after: 60, expected: .fresh, lifetime: 7 * day),
    ]

    @Test(arguments: stateCases)
    func freshnessStates(_ scenario: StateCase) {
        let freshness = HTTPFreshness(status: scenario.status, headers: scenario.headers, receivedAt: Self.received)
        #expect(freshness.state(at: Self.received.adding(scenario.after)) == scenario.expected)
        if let lifetime = scenario.lifetime { #expect(freshness.freshnessLifetime() == lifetime) }
    }

    @Test func theDefaultLifetimeIsConfigurable() {
        let freshness = HTTPFreshness(status: 200, headers: [], receivedAt: Self.received)
        let rules = HTTPFreshness.Rules(defaultLifetime: 3600)
        #expect(freshness.state(at: Self.received.adding(3599), rules: rules) == .fresh)
        #expect(freshness.state(at: Self.received.adding(3600), rules: rules) == .stale(withinStaleWhileRevalidate: false))
        #expect(freshness.remainingLifetime(at: Self.received.adding(3000), rules: rules) == 600)
        #expect(HTTPFreshness.Rules(defaultLifetime: -5).defaultLifetime == 0)
    }

    @Test func theRoundTripCountsInTheAge() {
        // Age 10 plus a 20 s round trip: the response was 30 s old when received (RFC 9111 §4.2.3).
        let freshness = HTTPFreshness(status: 200, headers: [("Cache-Control", "max-age=60"), ("Age", "10")],
                                      requestedAt: Self.received.adding(-20), receivedAt: Self.received)
        #expect(freshness.currentAge(at: Self.received) == 30)
        #expect(freshness.currentAge(at: Self.received.adding(29)) == 59)
        #expect(freshness.state(at: Self.received.adding(30)) == .stale(withinStaleWhileRevalidate: false))
    }

    // MARK: - Validators

    struct ValidatorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var headers: [(name: String, value: String)]
        var conditional: [String]
        var rangeValidator: String?
        var testDescription: String { name }
    }

    @Test(arguments: [
        ValidatorCase(name: "strong ETag", headers: [("ETag", #""abc""#)], conditional: [#"If-None-Match: "abc""#], rangeValidator: #""abc""#),
        ValidatorCase(name: "weak ETag: conditional, not for If-Range", headers: [("etag", #"W/"abc""#)], conditional: [#"If-None-Match: W/"abc""#], rangeValidator: nil),
        ValidatorCase(name: "Last-Modified, a second before Date: strong", headers: [("Last-Modified", "Mon, 23 Nov 2026 11:00:00 GMT"), ("Date", imf)],
                      conditional: ["If-Modified-Since: Mon, 23 Nov 2026 11:00:00 GMT"], rangeValidator: "Mon, 23 Nov 2026 11:00:00 GMT"),
        ValidatorCase(name: "Last-Modified equal to Date: weak", headers: [("Last-Modified", imf), ("Date", imf)],
                      conditional: ["If-Modified-Since: \(imf)"], rangeValidator: nil),
        ValidatorCase(name: "Last-Modified in RFC 850 form is sent as IMF-fixdate", headers: [("Last-Modified", "Monday, 23-Nov-26 11:00:00 GMT")],
                      conditional: ["If-Modified-Since: Mon, 23 Nov 2026 11:00:00 GMT"], rangeValidator: nil),
        ValidatorCase(name: "both: ETag first, ETag for If-Range", headers: [("Last-Modified", "Mon, 23 Nov 2026 11:00:00 GMT"), ("ETag", #""v2""#), ("Date", imf)],
                      conditional: [#"If-None-Match: "v2""#, "If-Modified-Since: Mon, 23 Nov 2026 11:00:00 GMT"], rangeValidator: #""v2""#),
        ValidatorCase(name: "unquoted ETag is none", headers: [("ETag", "abc")], conditional: [], rangeValidator: nil),
        ValidatorCase(name: "ETag with a quote inside is none", headers: [("ETag", #""a"b""#)], conditional: [], rangeValidator: nil),
        ValidatorCase(name: "two different ETags: none", headers: [("ETag", #""a""#), ("ETag", #""b""#)], conditional: [], rangeValidator: nil),
        ValidatorCase(name: "an ETag longer than 1 KiB is none", headers: [("ETag", "\"" + String(repeating: "x", count: 2000) + "\"")], conditional: [], rangeValidator: nil),
        ValidatorCase(name: "garbage Last-Modified is none", headers: [("Last-Modified", "yesterday")], conditional: [], rangeValidator: nil),
        ValidatorCase(name: "nothing", headers: [], conditional: [], rangeValidator: nil),
    ])
    func validators(_ scenario: ValidatorCase) {
        let freshness = HTTPFreshness(status: 200, headers: scenario.headers, receivedAt: Self.received)
        #expect(freshness.conditionalHeaders.map { "\($0.name): \($0.value)" } == scenario.conditional)
        #expect(freshness.rangeValidator == scenario.rangeValidator)
    }

    // MARK: - 304

    struct RefreshCase: Sendable, CustomTestStringConvertible {
        var name: String
        var stored: [(name: String, value: String)]
        var notModified: [(name: String, value: String)]
        /// nil: the 304 does not match the stored response.
        var stateAfter: [Int64: HTTPFreshness.State]?
        var entityTag: String? = nil
        var testDescription: String { name }
    }

    @Test(arguments: [
        RefreshCase(name: "same strong ETag: fresh again, the new max-age", stored: [("ETag", #""v1""#), ("Cache-Control", "max-age=60")],
                    notModified: [("ETag", #""v1""#), ("Cache-Control", "max-age=600")], stateAfter: [599: .fresh, 600: .stale(withinStaleWhileRevalidate: false)], entityTag: #""v1""#),
        RefreshCase(name: "no Cache-Control in the 304: the stored directives stay", stored: [("ETag", #""v1""#), ("Cache-Control", "max-age=60, must-revalidate")],
                    notModified: [("ETag", #""v1""#)], stateAfter: [59: .fresh, 60: .mustRevalidate]),
        RefreshCase(name: "a 304 without validators matches", stored: [("Last-Modified", "Mon, 23 Nov 2026 11:00:00 GMT"), ("Cache-Control", "max-age=60")],
                    notModified: [], stateAfter: [59: .fresh, 60: .stale(withinStaleWhileRevalidate: false)]),
        RefreshCase(name: "a 304 without Date or Age: its own time counts", stored: [("Cache-Control", "max-age=60"), ("Age", "50"), ("Date", "Mon, 23 Nov 2026 11:00:00 GMT")],
                    notModified: [("Cache-Control", "max-age=60")], stateAfter: [59: .fresh]),
        RefreshCase(name: "the 304's Age counts", stored: [("Cache-Control", "max-age=60")],
                    notModified: [("Age", "59")], stateAfter: [0: .fresh, 1: .stale(withinStaleWhileRevalidate: false)]),
        RefreshCase(name: "a new weak ETag matching weakly replaces the tag", stored: [("ETag", #""v1""#)],
                    notModified: [("ETag", #"W/"v1""#)], stateAfter: [0: .fresh], entityTag: #"W/"v1""#),
        RefreshCase(name: "a strong ETag does not strongly match a weak one", stored: [("ETag", #"W/"v1""#)],
                    notModified: [("ETag", #""v1""#)], stateAfter: nil),
        RefreshCase(name: "another ETag: no match", stored: [("ETag", #""v1""#)], notModified: [("ETag", #""v2""#)], stateAfter: nil),
        RefreshCase(name: "an ETag when none was stored: no match", stored: [], notModified: [("ETag", #""v2""#)], stateAfter: nil),
        RefreshCase(name: "a garbage ETag: no match", stored: [("ETag", #""v1""#)], notModified: [("ETag", "v1")], stateAfter: nil),
        RefreshCase(name: "another Last-Modified: no match", stored: [("Last-Modified", "Mon, 23 Nov 2026 11:00:00 GMT")],
                    notModified: [("Last-Modified", "Mon, 23 Nov 2026 11:30:00 GMT")], stateAfter: nil),
        RefreshCase(name: "no-store in a 304 marks it never stored", stored: [("ETag", #""v1""#)],
                    notModified: [("Cache-Control", "no-store")], stateAfter: [0: .neverStore]),
    ])
    func refreshAfterNotModified(_ scenario: RefreshCase) {
        let stored = HTTPFreshness(status: 200, headers: scenario.stored, receivedAt: Self.received)
        let later = Self.received.adding(10 * Self.day)
        let renewed = stored.refreshed(byNotModified: scenario.notModified, receivedAt: later)
        guard let expected = scenario.stateAfter else {
            #expect(renewed == nil)
            return
        }
        guard let renewed else {
            Issue.record("the 304 did not match")
            return
        }
        for (after, state) in expected {
            #expect(renewed.state(at: later.adding(after)) == state, "after \(after) s")
        }
        #expect(renewed.receivedAt == later && renewed.status == 200)
        if let tag = scenario.entityTag { #expect(renewed.entityTag?.headerValue == tag) }
    }

    @Test func hostileHeadersNeverTrap() {
        var random = SeededGenerator(seed: 0x4854_5450, label: "hostile freshness headers")
        let names = ["Cache-Control", "Expires", "Age", "Date", "ETag", "Last-Modified"]
        let pieces = ["max-age=", "-", "9999999999999999999999", "0", ",", "\"", "\\", "=", "W/", "GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
                      "stale-while-revalidate=", "no-store", "immutable", " ", "\u{0}", "é", "must-revalidate"]
        for _ in 0..<2_000 {
            let headers = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                (name: names.randomElement(using: &random)!,
                 value: (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
            }
            let at = HTTPDate(secondsSince1970: Int64.random(in: .min ... .max, using: &random))
            let freshness = HTTPFreshness(status: 200, headers: headers, requestedAt: at, receivedAt: HTTPDate(secondsSince1970: .random(in: .min ... .max, using: &random)))
            _ = freshness.state(at: at)
            _ = freshness.remainingLifetime(at: at)
            _ = freshness.conditionalHeaders
            _ = freshness.rangeValidator
            _ = freshness.refreshed(byNotModified: headers, receivedAt: at)?.state(at: at)
        }
    }
}
