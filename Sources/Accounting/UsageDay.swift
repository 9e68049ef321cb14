import HTTPSemantics
import Support

/// A calendar day in UTC, the unit of the usage ledger: `2026-11-23`.
///
/// Days are UTC so that every process writing one ledger (whatever its `TZ`) agrees on where a
/// day ends, and a day's file name never depends on the machine's time zone.
///
/// ```swift
/// let day = UsageDay(parsing: "2026-11-23")!     // nil for "2026-13-01" or "23/11/2026"
/// let today = UsageDay.today()
/// ```
public struct UsageDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year (1970…9999).
    public let year: Int
    /// The month (1…12).
    public let month: Int
    /// The day of the month (1…31, checked against the month).
    public let day: Int

    /// Creates a day, or nil when it does not exist (`2026-02-30`).
    public init?(year: Int, month: Int, day: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month),
              (1...Self.daysIn(month: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD` (ten characters, an existing day); nil for anything else.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The UTC day of `secondsSince1970` (now by default).
    public static func today(secondsSince1970: Int = Int(time(nil))) -> UsageDay {
        var seconds = time_t(secondsSince1970)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil,
              let day = UsageDay(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday)) else {
            return UsageDay(year: 1970, month: 1, day: 1)!
        }
        return day
    }

    /// The first day of this day's month.
    public var firstOfMonth: UsageDay { UsageDay(year: year, month: month, day: 1)! }

    /// `YYYY-MM-DD`.
    public var description: String {
        func padded(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }

    /// Earlier days first.
    public static func < (lhs: UsageDay, rhs: UsageDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
