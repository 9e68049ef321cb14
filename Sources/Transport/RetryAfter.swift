import HTTPSemantics
import Support

/// The wait a response asked for with `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or
/// an HTTP-date, taken relative to the response's own `Date` header when it has one (so that a
/// client clock that is wrong does not matter), else to this machine's clock. A date in the past
/// is no wait.
///
/// The header is untrusted: a value that is not a number or a date is ignored (nil), a number too
/// large for any sensible wait counts as `RetryAfter.longest`, and nothing overflows.
struct RetryAfter: Sendable, Equatable {
    /// What a larger number of seconds is taken as: far beyond any cap a policy may set.
    static let longest = Duration.seconds(1_000_000_000)

    /// How long to wait before asking again.
    var delay: Duration

    /// A wait of `delay`.
    init(delay: Duration) {
        self.delay = delay
    }

    /// The wait in `header`; nil when it is neither seconds nor an HTTP-date.
    ///
    /// - Parameters:
    ///   - header: the `Retry-After` value.
    ///   - responseDate: the response's `Date` value, if any: an HTTP-date is counted from it.
    ///   - now: seconds since 1970 on this machine, used when there is no usable `Date`.
    init?(header: String, responseDate: String?, now: @autoclosure () -> Int64 = RetryAfter.secondsSince1970()) {
        let value = header.trimmingSpaces
        if let seconds = Self.seconds(value) {
            delay = .seconds(seconds)
            return
        }
        guard let date = Self.httpDate(value) else { return nil }
        let reference = responseDate.flatMap { Self.httpDate($0.trimmingSpaces) } ?? now()
        let (difference, overflow) = date.subtractingReportingOverflow(reference)
        delay = overflow ? Self.longest : min(Self.longest, .seconds(max(0, difference)))
    }

    /// Digits only: the number, saturated at `longest`.
    private static func seconds(_ value: Substring) -> Int64? {
        guard !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let longest = longest.components.seconds
        var result: Int64 = 0
        for digit in value.utf8 {
            result = result * 10 + Int64(digit - 48)
            if result >= longest { return longest }
        }
        return result
    }

    /// Seconds since 1970 of an HTTP-date in any of its three forms (IMF-fixdate
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, asctime
    /// `Sun Nov  6 08:49:37 1994`), all in GMT; nil for anything else.
    static func httpDate(_ value: Substring) -> Int64? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        var month: Int?
        var time: [Int]?
        var numbers: [Int] = []
        for token in value.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }) {
            if token.contains(":") {
                let parts = token.split(separator: ":", omittingEmptySubsequences: false).map { Self.smallNumber($0) }
                guard time == nil, parts.count == 3, parts.allSatisfy({ $0 != nil }) else { return nil }
                time = parts.compactMap { $0 }
            } else if let number = Self.smallNumber(token) {
                numbers.append(number)
            } else if let index = months.firstIndex(of: token.lowercased()) {
                guard month == nil else { return nil }
                month = index + 1
            }
            // Other words (the weekday, GMT) say nothing the numbers do not.
        }
        guard let month, let time, numbers.count == 2 else { return nil }
        let day = numbers[0]
        var year = numbers[1]
        if year < 100 { year += year < 70 ? 2000 : 1900 }
        guard (1...31).contains(day), (1970...9999).contains(year),
              time[0] < 24, time[1] < 60, time[2] < 61 else { return nil }
        let days = daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day))
        return days * 86_400 + Int64(time[0] * 3600 + time[1] * 60 + time[2])
    }

    /// 1 to 4 digits.
    private static func smallNumber(_ token: Substring) -> Int? {
        guard (1...4).contains(token.utf8.count), token.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(token)
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
    /// `days_from_civil`), for years 1970 to 9999.
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// This machine's clock, in seconds since 1970.
    static func secondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}

extension String {
    /// Without leading and trailing blanks.
    fileprivate var trimmingSpaces: Substring {
        let isText = { (character: Character) in !(character == " " || character == "\t" || character == "\r" || character == "\n") }
        guard let first = firstIndex(where: isText), let last = lastIndex(where: isText) else { return "" }
        return self[first...last]
    }
}
