import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Policy
import Testing

/// `RangeResumption`'s rules without I/O: a 206 is combined with the held bytes only when it is
/// the rest of the same version (RFC 9110 §13.1.5, RFC 9111 §3.4); and `ContentLengthVerdict`.
struct RangeResumptionTests {
    static let held = PartialBody(bytes: [UInt8](repeating: 7, count: 300), validator: "\"A\"", totalLength: 1000)
    static let resumption = RangeResumption(held: held)
    static let rest = "bytes 300-999/1000"

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int
        var headers: [(name: String, value: String)]
        var combines: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "the same strong ETag and the rest", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", rest)], combines: true),
        Case(name: "another ETag", status: 206, headers: [("ETag", "\"B\""), ("Content-Range", rest)], combines: false),
        Case(name: "a weak ETag of the same tag", status: 206, headers: [("ETag", "W/\"A\""), ("Content-Range", rest)], combines: false),
        Case(name: "no ETag", status: 206, headers: [("Content-Range", rest)], combines: false),
        Case(name: "two ETags", status: 206, headers: [("ETag", "\"A\""), ("ETag", "\"B\""), ("Content-Range", rest)], combines: false),
        Case(name: "another start", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", "bytes 0-999/1000")], combines: false),
        Case(name: "another length", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", "bytes 300-1999/2000")], combines: false),
        Case(name: "a short range", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", "bytes 300-500/1000")], combines: false),
        Case(name: "no Content-Range", status: 206, headers: [("ETag", "\"A\"")], combines: false),
        Case(name: "an unknown length", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", "bytes 300-999/*")], combines: false),
        Case(name: "two Content-Ranges", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", rest), ("Content-Range", rest)], combines: false),
        Case(name: "an encoded body", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", rest), ("Content-Encoding", "gzip")], combines: false),
        Case(name: "identity encoding", status: 206, headers: [("ETag", "\"A\""), ("Content-Range", rest), ("Content-Encoding", "identity")], combines: true),
    ]

    @Test(arguments: cases)
    func a206IsCombinedOnlyWhenItIsTheRestOfTheSameVersion(_ item: Case) {
        let verdict = Self.resumption.judge(status: item.status, headers: item.headers)
        if item.combines {
            #expect(verdict == .combine)
        } else if case .refuse = verdict {
        } else {
            Issue.record("\(item.name): \(verdict)")
        }
    }

    @Test func otherStatusesAreNotCombined() {
        #expect(Self.resumption.judge(status: 200, headers: [("ETag", "\"A\"")]) == .wholeBodyInstead)
        #expect(Self.resumption.judge(status: 503, headers: []) == .notAboutTheBody)
        if case .refuse = Self.resumption.judge(status: 416, headers: []) {} else { Issue.record("416 is no refusal") }
    }

    @Test func aHeldDateMustBeTheSameLastModified() {
        let date = "Tue, 01 Sep 2026 10:00:00 GMT"
        let dated = RangeResumption(held: PartialBody(bytes: [1, 2, 3], validator: date, totalLength: 10))
        let range = ("Content-Range", "bytes 3-9/10")
        #expect(dated.judge(status: 206, headers: [("Last-Modified", date), range]) == .combine)
        #expect(dated.judge(status: 206, headers: [("Last-Modified", "Wed, 02 Sep 2026 10:00:00 GMT"), range]) != .combine)
        #expect(dated.judge(status: 206, headers: [range]) != .combine)
    }

    @Test func theCombinedAnswerIsPresentedAsTheWhole200() {
        let headers = Self.resumption.combinedHeaders([("ETag", "\"A\""), ("Content-Range", Self.rest), ("Content-Length", "700")])
        #expect(headers.map(\.name) == ["ETag", "Content-Length"] && headers.last?.value == "1000")
    }

    @Test func aFailedAttemptIsResumableOnlyWithAStrongValidatorAndALength() {
        let now = HTTPDate(secondsSince1970: 1_800_000_000)
        let body = [UInt8](repeating: 1, count: 100)
        func resumable(_ status: Int, _ headers: [(name: String, value: String)]) -> Bool {
            RangeResumption.ofFailedAttempt(status: status, headers: headers, body: body, receivedThisLoad: 100, now: now) != nil
        }
        #expect(resumable(200, [("ETag", "\"A\""), ("Content-Length", "1000")]))
        #expect(!resumable(200, [("ETag", "W/\"A\""), ("Content-Length", "1000")]))
        #expect(!resumable(200, [("ETag", "\"A\"")]))
        #expect(!resumable(200, [("ETag", "\"A\""), ("Content-Length", "100")]))
        #expect(!resumable(200, [("ETag", "\"A\""), ("Content-Length", "1000"), ("Content-Length", "900")]))
        #expect(!resumable(200, [("ETag", "\"A\""), ("Content-Length", "1000"), ("Content-Encoding", "br")]))
        #expect(!resumable(503, [("ETag", "\"A\""), ("Content-Length", "1000")]))
    }

    @Test func contentLengthsThatDisagreeAreAConflict() {
        #expect(ContentLengthVerdict([]) == .absent)
        #expect(ContentLengthVerdict(["4714"]) == .length(4714))
        #expect(ContentLengthVerdict(["10", "10"]) == .length(10))
        #expect(ContentLengthVerdict(["10, 10"]) == .length(10))
        #expect(ContentLengthVerdict(["4714", "10"]) == .conflicting(["4714", "10"]))
        #expect(ContentLengthVerdict(["10, 11"]) == .conflicting(["10, 11"]))
        #expect(ContentLengthVerdict(["-1"]) == .conflicting(["-1"]))
        #expect(ContentLengthVerdict(["1e3"]) == .conflicting(["1e3"]))
        #expect(ContentLengthVerdict([""]) == .conflicting([""]))
    }
}
