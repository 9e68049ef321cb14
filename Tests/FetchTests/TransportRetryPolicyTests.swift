import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Testing
import TestSupport

/// The retry decisions as values, without I/O: which failures are retried, the backoff's bounds,
/// `Retry-After` in its forms and its cap.
struct TransportRetryPolicyTests {
    @Test(arguments: [
        (FetchError.Code.httpStatus(500), true), (.httpStatus(502), true), (.httpStatus(503), true),
        (.httpStatus(504), true), (.httpStatus(408), true), (.httpStatus(429), true),
        (.httpStatus(501), false), (.httpStatus(505), false), (.httpStatus(400), false),
        (.httpStatus(401), false), (.httpStatus(403), false), (.httpStatus(404), false), (.httpStatus(410), false),
        (.transport(curlCode: 7, message: "refused"), true), (.transport(curlCode: 28, message: "timed out"), true),
        (.transport(curlCode: 6, message: "resolve"), true), (.transport(curlCode: 56, message: "recv"), true),
        (.transport(curlCode: 60, message: "certificate"), false), (.transport(curlCode: 35, message: "tls"), false),
        (.truncated(expected: 10, received: 5), true),
        (.notAnImage(contentType: "text/html", start: "<html>"), false), (.emptyBody, false),
        (.tooLarge(limit: 10), false), (.redirectRefused("file://"), false), (.cancelled, false),
        (.offline, false), (.localIO(path: "/cache/x", errno: 28, message: "disk"), false),
    ])
    func transientFailuresOnly(_ code: FetchError.Code, retried: Bool) {
        var random = SeededGenerator(seed: 1)
        let next = RetryPolicy.standard.next(after: code, attempt: 1, retryAfter: nil, using: &random)
        #expect((next != .giveUp) == retried)
    }

    @Test func attemptsAreBounded() {
        var random = SeededGenerator(seed: 2)
        let policy = RetryPolicy(attempts: 4)
        let retried = (1...5).map { policy.next(after: .httpStatus(503), attempt: $0, retryAfter: nil, using: &random) != .giveUp }
        #expect(retried == [true, true, true, false, false])
        #expect(RetryPolicy.never.next(after: .httpStatus(503), attempt: 1, retryAfter: nil, using: &random) == .giveUp)
    }

    /// Full jitter: every wait lies between zero and the doubling ceiling, capped; over many
    /// draws the waits spread over the whole range.
    @Test(arguments: [(1, Duration.milliseconds(500)), (2, .seconds(1)), (3, .seconds(2)), (6, .seconds(16)),
                      (7, .seconds(30)), (40, .seconds(30)), (Int.max, .seconds(30))])
    func theBackoffIsAFullJitterUnderTheDoublingCeiling(retry: Int, ceiling: Duration) {
        var random = SeededGenerator(seed: UInt64(truncatingIfNeeded: retry), label: "full jitter, retry \(retry)")
        let waits = (0..<2000).map { _ in RetryPolicy.standard.backoff(beforeRetry: retry, using: &random) }
        #expect(waits.allSatisfy { $0 >= .zero && $0 <= ceiling })
        #expect(waits.min()! < ceiling / 10)
        #expect(waits.max()! > ceiling * 9 / 10)
    }

    @Test func aServersRetryAfterIsTakenAsIsUpToTheCap() {
        var random = SeededGenerator(seed: 3)
        let policy = RetryPolicy(maximumRetryAfter: .seconds(60))
        #expect(policy.next(after: .httpStatus(429), attempt: 1, retryAfter: RetryAfter(delay: .seconds(60)), using: &random)
                == .retry(after: .seconds(60), serverAsked: true))
        #expect(policy.next(after: .httpStatus(429), attempt: 1, retryAfter: RetryAfter(delay: .seconds(61)), using: &random)
                == .giveUp)
        // A Retry-After on a response that is not transient changes nothing.
        #expect(policy.next(after: .httpStatus(404), attempt: 1, retryAfter: RetryAfter(delay: .seconds(1)), using: &random)
                == .giveUp)
    }

    @Test(arguments: [
        ("120", nil, Duration?.some(.seconds(120))),
        ("  0 ", nil, .zero),
        ("99999999999999999999999999", nil, RetryAfter.longest),
        ("Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:00 GMT", .seconds(37)),
        ("Sunday, 06-Nov-94 08:50:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", .seconds(60)),
        ("Sun Nov  6 09:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT", .seconds(3600)),
        ("Mon, 07 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", .seconds(86_400)),
        ("Tue, 01 Mar 2000 00:00:00 GMT", "Mon, 28 Feb 2000 00:00:00 GMT", .seconds(2 * 86_400)),
        ("Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 09:00:00 GMT", .zero),
        ("-5", nil, nil),
        ("1.5", nil, nil),
        ("soon", nil, nil),
        ("", nil, nil),
        ("Sun, 32 Nov 1994 08:49:37 GMT", nil, nil),
        ("Sun, 06 Nov 1994 25:49:37 GMT", nil, nil),
        ("Sun, 06 Foo 1994 08:49:37 GMT", nil, nil),
        ("Sun, 06 Nov 1994 08:49 GMT", nil, nil),
    ] as [(String, String?, Duration?)])
    func retryAfterInItsForms(header: String, responseDate: String?, delay: Duration?) {
        // Without a Date header, a date counts from this machine's clock: fixed here at 1994-11-06 08:49:37.
        #expect(RetryAfter(header: header, responseDate: responseDate, now: 784_111_777)?.delay == delay)
    }

    @Test func anHTTPDateIsCountedFromTheMachinesClockWithoutADateHeader() {
        #expect(RetryAfter(header: "Sun, 06 Nov 1994 08:49:47 GMT", responseDate: nil, now: 784_111_777)?.delay == .seconds(10))
        #expect(RetryAfter.httpDate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
    }
}
