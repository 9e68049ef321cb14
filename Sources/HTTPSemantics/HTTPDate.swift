import Support

/// A moment in whole seconds since 1970-01-01 00:00:00 UTC, as HTTP dates carry it
/// (`Date`, `Expires`, `Last-Modified`, `If-Modified-Since`).
///
/// Parses the three formats of RFC 9110 §5.6.7 and writes the preferred one:
/// ```swift
/// HTTPDate(parsing: "Sun, 06 Nov 1994 08:49:37 GMT")    // IMF-fixdate
/// HTTPDate(parsing: "Sunday, 06-Nov-94 08:49:37 GMT")   // RFC 850 (two-digit year)
/// HTTPDate(parsing: "Sun Nov  6 08:49:37 1994")         // asctime
/// HTTPDate(secondsSince1970: 784_111_777).formatted    // "Sun, 06 Nov 1994 08:49:37 GMT"
/// ```
/// Parsing is strict about the shape and never traps: anything else (garbage, `0`, a day 31 of
/// February, a year past 9999) is nil.
public struct HTTPDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970-01-01 00:00:00 UTC (negative before).
    public var secondsSince1970: Int64

    /// The moment `secondsSince1970` seconds after 1970-01-01 00:00:00 UTC.
    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    /// Now, by the system's wall clock (`CLOCK_REALTIME`).
    public static func now() -> HTTPDate {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return HTTPDate(secondsSince1970: Int64(time.tv_sec))
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: HTTPDate, rhs: HTTPDate) -> Bool { lhs.secondsSince1970 < rhs.secondsSince1970 }

    /// This moment `seconds` later (saturating: never traps).
    public func adding(_ seconds: Int64) -> HTTPDate {
        HTTPDate(secondsSince1970: Saturating.add(secondsSince1970, seconds))
    }

    /// Seconds from `other` to this moment (saturating).
    public func seconds(since other: HTTPDate) -> Int64 {
        Saturating.subtract(secondsSince1970, other.secondsSince1970)
    }

    // MARK: - Parsing

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date in `text` (IMF-fixdate, RFC 850 or asctime; surrounding spaces allowed), or nil.
    /// The day name is checked for its form, not against the date (as RFC 9110 allows).
    public init?(parsing text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 64 else { return nil }
        var trimmed = bytes[...]
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        let parts = Array(trimmed).split(separator: 0x20, omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
        let parsed: (year: Int, month: Int, day: Int, time: (Int, Int, Int))?
        if parts.count == 6, parts[0].hasSuffix(","), Self.dayNames.contains(String(parts[0].dropLast())), parts[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard parts[1].utf8.count == 2, parts[3].utf8.count == 4 else { return nil }
            parsed = Self.fields(day: parts[1], month: parts[2], year: parts[3], time: parts[4])
        } else if parts.count == 4, parts[0].hasSuffix(","), Self.longDayNames.contains(String(parts[0].dropLast())), parts[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT. A two-digit year more than 50 years in the
            // future is taken as the past century's (RFC 9110 §5.6.7).
            let pieces = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard pieces.count == 3, pieces[0].utf8.count == 2, pieces[2].utf8.count == 2,
                  let short = Self.number(pieces[2]) else { return nil }
            let thisYear = Self.civil(fromDays: HTTPDate.now().secondsSince1970 / 86_400).year
            var year = thisYear - thisYear % 100 + short
            if year > thisYear + 50 { year -= 100 }
            parsed = Self.fields(day: pieces[0], month: pieces[1], year: String(year), time: parts[2])
        } else if parts.count == 5, Self.dayNames.contains(parts[0]) {
            // asctime: Sun Nov  6 08:49:37 1994
            guard (1...2).contains(parts[2].utf8.count), parts[4].utf8.count == 4 else { return nil }
            parsed = Self.fields(day: parts[2], month: parts[1], year: parts[4], time: parts[3])
        } else {
            parsed = nil
        }
        guard let parsed else { return nil }
        let days = Self.days(year: parsed.year, month: parsed.month, day: parsed.day)
        secondsSince1970 = days * 86_400 + Int64(parsed.time.0 * 3600 + parsed.time.1 * 60 + parsed.time.2)
    }

    private static func fields(day: some StringProtocol, month: some StringProtocol, year: some StringProtocol, time: some StringProtocol)
        -> (year: Int, month: Int, day: Int, time: (Int, Int, Int))? {
        guard let day = number(day), let monthIndex = monthNames.firstIndex(of: String(month)),
              year.utf8.count == 4, let year = number(year) else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.utf8.count == 2 }),
              let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
              hour < 24, minute < 60, second <= 60 else { return nil }  // 60: a leap second
        let month = monthIndex + 1
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return (year, month, day, (hour, minute, min(second, 59)))
    }

    /// A run of 1 to 4 ASCII digits, or nil.
    private static func number(_ text: some StringProtocol) -> Int? {
        let utf8 = text.utf8
        guard (1...4).contains(utf8.count), utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return utf8.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (`civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    // MARK: - Formatting

    /// The IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`), for `If-Modified-Since`. Years
    /// outside 0…9999 are clamped to them (no HTTP date says otherwise).
    public var formatted: String {
        let lowest: Int64 = -62_167_219_200  // 0000-01-01
        let highest: Int64 = 253_402_300_799  // 9999-12-31 23:59:59
        let seconds = min(max(secondsSince1970, lowest), highest)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let date = Self.civil(fromDays: days)
        let weekday = Int(((days % 7) + 7 + 3) % 7)  // 1970-01-01 was a Thursday (index 3)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(date.year)
        return "\(Self.dayNames[weekday]), \(two(Int64(date.day))) \(Self.monthNames[date.month - 1]) "
            + String(repeating: "0", count: max(0, 4 - year.count)) + year
            + " \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// `formatted`.
    public var description: String { formatted }
}

