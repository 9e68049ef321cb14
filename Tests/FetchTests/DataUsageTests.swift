import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Policy
import Testing
import Support

/// The value type: its arithmetic, its merge, its ledger form, and the UTC day.
struct DataUsageTests {
    static let cellular = DataUsage.Link(.cellular)
    static let roaming = DataUsage.Link(.cellular, isRoaming: true)
    static let wifi = DataUsage.Link(.wifi)

    func usage(_ entries: [(DataUsage.Link, Variant, FetchedImage.Source, Int, Int)], held: [DataUsage.Link: Int] = [:]) -> DataUsage {
        var usage = DataUsage()
        for (link, variant, source, bytes, transfers) in entries {
            usage.add(.init(bytes: bytes, transfers: transfers), for: .init(link: link, variant: variant, source: source))
        }
        for (link, count) in held { usage.addOriginalsNotDownloaded(count, on: link) }
        return usage
    }

    @Test func sumsAddPerKeyAndTotalsSelectBySourceLinkAndVariant() {
        let a = usage([(Self.cellular, .thumbnail, .network, 2_000, 1), (Self.wifi, .original, .network, 200_000, 1)], held: [Self.cellular: 1])
        let b = usage([(Self.cellular, .thumbnail, .network, 3_000, 2), (Self.cellular, .thumbnail, .disk, 2_000, 1),
                       (Self.roaming, .thumbnail, .network, 500, 1)], held: [Self.cellular: 2, Self.roaming: 1])
        let sum = a + b
        #expect(sum.amounts[.init(link: Self.cellular, variant: .thumbnail, source: .network)] == .init(bytes: 5_000, transfers: 3))
        #expect(sum.downloadedBytes() == 205_500)
        #expect(sum.downloadedBytes { $0.kind == .cellular } == 5_500)
        #expect(sum.downloadedBytes { $0 == Self.cellular } == 5_000)   // roaming kept apart
        #expect(sum.amount(from: .disk) == .init(bytes: 2_000, transfers: 1))
        #expect(sum.originalsNotDownloaded() == 4)
        #expect(sum.originalsNotDownloaded { $0.isRoaming } == 1)
        #expect(sum.links == [Self.wifi, Self.cellular, Self.roaming])
        // Merge is the same sum, and addition is commutative and has the empty usage as identity.
        var merged = a
        merged.merge(b)
        #expect(merged == sum && b + a == sum && a + DataUsage() == a)
        #expect(DataUsage().isEmpty && !sum.isEmpty)
    }

    @Test func sumsSaturateInsteadOfOverflowing() {
        let huge = usage([(Self.wifi, .original, .network, .max, .max)], held: [Self.wifi: .max])
        let sum = huge + huge
        #expect(sum.amounts.values.first == .init(bytes: .max, transfers: .max))
        #expect(sum.originalsNotDownloaded() == .max)
        #expect(sum.estimatedSavedBytes(perOriginal: 2) == .max)
        #expect(DataUsage.Amount(bytes: -5, transfers: -1) == .init())
    }

    @Test func savedBytesAreEstimatedFromTheMeanOriginalDownloaded() {
        let none = usage([(Self.cellular, .thumbnail, .network, 2_000, 1)], held: [Self.cellular: 3])
        #expect(none.averageOriginalBytes == nil)  // nothing to estimate from
        let some = none + usage([(Self.wifi, .original, .network, 300_000, 2), (Self.wifi, .original, .disk, 999_999, 5)])
        #expect(some.averageOriginalBytes == 150_000)  // downloads only, not cache reads
        #expect(some.estimatedSavedBytes(perOriginal: 150_000) == 450_000)
        #expect(some.estimatedSavedBytes(perOriginal: 150_000) { $0.kind == .wifi } == 0)
    }

    @Test(arguments: ["wifi", "cellular", "cellular,expensive", "cellular,roaming", "unknown,expensive"])
    func linksReadBackWhatTheyWrite(_ text: String) {
        #expect(DataUsage.Link(parsing: text)?.description == text)
    }

    @Test(arguments: ["", "5g", "cellular,", "cellular,constrained", "wifi,expensive,roaming", "Cellular"])
    func badLinksAreRefused(_ text: String) {
        #expect(DataUsage.Link(parsing: text) == nil)
    }

    @Test func theLedgerFormReadsBackEqual() throws {
        var original = usage([(Self.cellular, .thumbnail, .network, 2_000, 1), (Self.roaming, .original, .memory, 7, 1)], held: [Self.cellular: 2])
        original.addRetries(3, on: Self.cellular)
        let day = UsageDay(parsing: "2026-11-23")!
        let text = JSONWriter.compactText(of: original.ledgerJSON(day: day))
        let read = try DataUsage(ledgerJSON: JSONParser().parse(text), day: day)
        #expect(read == original)
        #expect(throws: LedgerFormatError.self) { try DataUsage(ledgerJSON: JSONParser().parse(text), day: UsageDay(parsing: "2026-11-24")!) }
    }

    /// Issue 18: downloads are kept by the width shown when the item says it (a rung); a key
    /// without a width is written as before, so older ledgers read the same.
    @Test func widthsAreKeptApartAndReadBack() throws {
        var usage = DataUsage()
        usage.add(.init(bytes: 40_000, transfers: 1), for: .init(link: Self.cellular, variant: .thumbnail, source: .network, width: 640))
        usage.add(.init(bytes: 9_000, transfers: 1), for: .init(link: Self.cellular, variant: .thumbnail, source: .network, width: 160))
        usage.add(.init(bytes: 41_000, transfers: 1), for: .init(link: Self.cellular, variant: .thumbnail, source: .network, width: 640))
        usage.add(.init(bytes: 2_000, transfers: 1), for: .init(link: Self.cellular, variant: .thumbnail, source: .network))
        #expect(usage.amount { $0.width == 640 } == .init(bytes: 81_000, transfers: 2))
        #expect(usage.amount { $0.width == nil } == .init(bytes: 2_000, transfers: 1))
        let day = UsageDay(parsing: "2026-11-23")!
        let text = JSONWriter.compactText(of: usage.ledgerJSON(day: day))
        #expect(text.contains(#""width":640,"#) && text.components(separatedBy: #""width""#).count == 3, "\(text)")
        #expect(try DataUsage(ledgerJSON: JSONParser().parse(text), day: day) == usage)
        for bad in ["0", "1000001", "\"640\"", "6.4e2", "-640"] {
            let damaged = #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[{"link":"wifi","variant":"original","source":"network","width":"#
                + bad + #","bytes":1,"transfers":1}],"originalsNotDownloaded":{},"retries":{}}"#
            #expect(throws: LedgerFormatError.self, "width \(bad)") { try DataUsage(ledgerJSON: JSONParser().parse(damaged), day: day) }
        }
    }

    @Test(arguments: [
        #"[]"#,
        #"{"format":"imgpolicy usage 2","day":"2026-11-23","loads":[],"originalsNotDownloaded":{},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[{"link":"wifi","variant":"original","source":"network","bytes":-1,"transfers":1}],"originalsNotDownloaded":{},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[{"link":"wifi","variant":"original","source":"network","bytes":1e3,"transfers":1}],"originalsNotDownloaded":{},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[{"link":"wifi","variant":"original","source":"network","bytes":99999999999999999999999,"transfers":1}],"originalsNotDownloaded":{},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[{"link":"wifi","variant":"huge","source":"network","bytes":1,"transfers":1}],"originalsNotDownloaded":{},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[],"originalsNotDownloaded":{"mars":1},"retries":{}}"#,
        #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[]}"#,
    ])
    func untrustedLedgerValuesAreRefusedNeverTrapped(_ text: String) throws {
        let value = try JSONParser().parse(text)
        #expect(throws: LedgerFormatError.self) { try DataUsage(ledgerJSON: value, day: UsageDay(parsing: "2026-11-23")!) }
    }

    /// A ledger text for 2026-11-23 with one load of `bytes` and `transfers`, and `held` originals not downloaded.
    static func ledgerText(bytes: String, transfers: String = "1", held: String = "0", loads: Int = 1) -> String {
        let load = #"{"link":"wifi","variant":"original","source":"network","bytes":\#(bytes),"transfers":\#(transfers)}"#
        return #"{"format":"imgpolicy usage 1","day":"2026-11-23","loads":[\#(Array(repeating: load, count: loads).joined(separator: ","))],"#
            + #""originalsNotDownloaded":{"cellular":\#(held)},"retries":{}}"#
    }

    /// A value no real usage reaches (Int64.max, 2^53, anything above 2^53 − 1) or negative is
    /// refused naming the line and the key, and so is a day whose total would pass the bound; 2^53 − 1 itself is read.
    @Test(arguments: [
        (ledgerText(bytes: "9223372036854775807"), #"line 1: "loads" item 1, "bytes": 9223372036854775807 is more than 9007199254740991"#),
        (ledgerText(bytes: "9007199254740992"), #"line 1: "loads" item 1, "bytes": 9007199254740992 is more than 9007199254740991"#),
        (ledgerText(bytes: "1", transfers: "-1"), #"line 1: "loads" item 1, "transfers": -1 is not a whole number from 0 to 9007199254740991"#),
        (ledgerText(bytes: "1", held: "9223372036854775807"), #"line 1: "originalsNotDownloaded", "cellular": 9223372036854775807 is more than"#),
        (ledgerText(bytes: "9007199254740991", loads: 2), #"the day's total "bytes" of all loads is more than 9007199254740991"#),
        ("{\n" + ledgerText(bytes: "1").dropFirst().replacingOccurrences(of: #""loads":["#, with: "\n\"loads\":[\n") .replacingOccurrences(of: #""bytes":1"#, with: #""bytes":"1""#),
         #"line 4: "loads" item 1, "bytes": a string is not a whole number"#),
    ])
    func valuesBeyondTheBoundAreRefusedNamingTheLineAndKey(_ text: String, _ message: String) throws {
        let value = try JSONParser().parse(text)
        #expect {
            try DataUsage(ledgerJSON: value, day: UsageDay(parsing: "2026-11-23")!)
        } throws: { error in
            ((error as? LedgerFormatError)?.message ?? "").hasPrefix(message)
        }
    }

    @Test func theBoundItselfIsReadAndAnEstimateBeyondItIsNone() throws {
        let read = try DataUsage(ledgerJSON: JSONParser().parse(Self.ledgerText(bytes: "9007199254740991", held: "1")), day: UsageDay(parsing: "2026-11-23")!)
        #expect(read.downloadedBytes() == DataUsage.maximumCount)
        #expect(read.savedBytesEstimate(perOriginal: DataUsage.maximumCount) == DataUsage.maximumCount)
        var twice = read
        twice.addOriginalsNotDownloaded(1, on: Self.cellular)
        #expect(twice.savedBytesEstimate(perOriginal: DataUsage.maximumCount) == nil)  // never a saturated figure
        #expect(twice.savedBytesEstimate(perOriginal: 1_000) == 2_000)
    }

    @Test(arguments: [("2026-11-23", true), ("2024-02-29", true), ("2023-02-29", false), ("2026-13-01", false),
                      ("2026-00-10", false), ("2026-11-31", false), ("26-11-23", false), ("2026-1-23", false),
                      ("2026/11/23", false), ("1969-12-31", false), ("２０２６-11-23", false), ("", false)])
    func daysParseOnlyExistingYYYYMMDD(_ text: String, _ valid: Bool) {
        let day = UsageDay(parsing: text)
        #expect((day != nil) == valid)
        if let day { #expect(day.description == text) }
    }

    @Test func todayIsTheUTCDay() {
        #expect(UsageDay.today(secondsSince1970: 0).description == "1970-01-01")
        #expect(UsageDay.today(secondsSince1970: 1_795_478_399).description == "2026-11-23")  // 23:59:59 UTC
        #expect(UsageDay.today(secondsSince1970: 1_795_478_400).description == "2026-11-24")
        #expect(UsageDay(parsing: "2026-11-23")!.firstOfMonth.description == "2026-11-01")
    }
}
