import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport
import Support

/// The ledger in the cache folder's `usage/`: sums kept across writers, damaged files set aside,
/// links and special files refused, the disk cache leaving it alone.
struct DataUsageLedgerTests {
    let folder = TemporaryFolder()
    let ledger: DataUsageLedger
    let day = UsageDay(parsing: "2026-11-23")!

    init() throws {
        _ = try DiskCache(folder: folder.path)  // the marker: a cache folder
        ledger = DataUsageLedger(cacheFolder: folder.path)
    }

    func usage(bytes: Int, held: Int = 0) -> DataUsage {
        var usage = DataUsage()
        usage.add(.init(bytes: bytes, transfers: 1), for: .init(link: .init(.cellular), variant: .thumbnail, source: .network))
        usage.addOriginalsNotDownloaded(held, on: .init(.cellular))
        return usage
    }

    @Test func addsSumPerDayAndReadBack() throws {
        try ledger.add(usage(bytes: 100, held: 1), on: day)
        try ledger.add(usage(bytes: 50), on: day)
        try ledger.add(usage(bytes: 7), on: UsageDay(parsing: "2026-10-31")!)
        let reading = ledger.read()
        #expect(reading.problems.isEmpty)
        #expect(reading.days[day] == usage(bytes: 100, held: 1) + usage(bytes: 50))
        #expect(reading.total().downloadedBytes() == 157)
        #expect(reading.total(since: UsageDay(parsing: "2026-11-01")!).downloadedBytes() == 150)
        #expect(try folder.list("usage") == ["2026-10-31.json", "2026-11-23.json", "lock"])
    }

    /// Eight threads, each with a ledger value of its own, adding at once: no update is lost.
    @Test func threadsAddingAtOnceLoseNothing() async throws {
        let path = folder.path, day = self.day
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    try await offThePool {
                        let own = DataUsageLedger(cacheFolder: path)
                        for _ in 0..<25 { try own.add(self.usage(bytes: thread + 1, held: 1), on: day) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = ledger.read().total()
        #expect(total.amount(from: .network) == .init(bytes: 25 * (1...8).reduce(0, +), transfers: 200))
        #expect(total.originalsNotDownloaded() == 200)
        #expect(try folder.list("usage").allSatisfy { !$0.hasPrefix(".") })  // no temporary left
    }

    @Test(arguments: ["garbage {", "", #"{"format":"imgpolicy usage 1","day":"2026-11-24","loads":[],"originalsNotDownloaded":{},"retries":{}}"#])
    func aDamagedDayIsReportedAndSetAsideNeverSilentlyOverwritten(_ content: String) throws {
        try folder.write(content, to: "usage/2026-11-23.json")
        let reading = ledger.read()
        #expect(reading.days.isEmpty)
        #expect(reading.problems.map(\.code) == [.damaged])
        #expect(reading.problems.first?.path == ledger.path(of: day))
        let notices = try ledger.add(usage(bytes: 10), on: day)
        #expect(notices.count == 1 && notices[0].code == .damaged && notices[0].path == ledger.path(of: day))
        #expect(notices[0].message.contains("set aside as 2026-11-23.json.damaged-"))
        let aside = try #require(try folder.list("usage").first { $0.hasPrefix("2026-11-23.json.damaged-") })
        #expect(try folder.read("usage/" + aside) == content)  // kept as it was
        #expect(ledger.read().days[day] == usage(bytes: 10))
        #expect(ledger.read().problems.isEmpty)
    }

    /// Days each within the bound whose sum would pass it: the ledger counts the oldest ones up
    /// to the bound and reports the day that would pass it (damaged, not counted), so no total
    /// saturates; adding a real run's usage to a day at the bound sets that day aside.
    @Test func aDayThatWouldTakeTheLedgersTotalPastTheBoundIsReportedNotCounted() throws {
        var atBound = DataUsage()
        atBound.add(.init(bytes: DataUsage.maximumCount, transfers: 1), for: .init(link: .init(.wifi), variant: .original, source: .network))
        let earlier = UsageDay(parsing: "2026-11-22")!
        try folder.write(JSONWriter.compactText(of: atBound.ledgerJSON(day: earlier)), to: "usage/2026-11-22.json")
        try folder.write(JSONWriter.compactText(of: usage(bytes: 1).ledgerJSON(day: day)), to: "usage/2026-11-23.json")
        let reading = ledger.read()
        #expect(reading.days.keys.sorted() == [earlier])
        #expect(reading.problems.count == 1 && reading.problems[0].code == .damaged && reading.problems[0].path == ledger.path(of: day))
        #expect(reading.problems[0].message.contains(#"not counted: with it the ledger's total "bytes" of all loads would be more than 9007199254740991"#))
        #expect(reading.total().downloadedBytes() == DataUsage.maximumCount)
        let notices = try ledger.add(usage(bytes: 10), on: earlier)
        #expect(notices.count == 1 && notices[0].path == ledger.path(of: earlier) && notices[0].message.contains("with this run's usage"))
        #expect(ledger.read().days[earlier] == usage(bytes: 10))
    }

    @Test func aTemporaryLeftByAKilledWriterIsIgnoredAndSweptByTheNextWrite() throws {
        try ledger.add(usage(bytes: 10), on: day)
        try folder.write(#"{"format":"imgpolicy us"#, to: "usage/.2026-11-23.json.tmp-Ab12Cd")
        #expect(ledger.read().days[day] == usage(bytes: 10) && ledger.read().problems.isEmpty)
        try ledger.add(usage(bytes: 5), on: day)
        #expect(!(try folder.list("usage").contains(".2026-11-23.json.tmp-Ab12Cd")))
        #expect(ledger.read().days[day]?.downloadedBytes() == 15)
    }

    enum Special: String, CaseIterable { case fifo, linkOutside, linkToFolderOutside }

    func make(_ special: Special, at name: String, outside: TemporaryFolder) throws {
        if name != "usage" { try FileManager.default.createDirectory(atPath: folder.file("usage"), withIntermediateDirectories: true) }
        switch special {
        case .fifo: #expect(mkfifo(folder.file(name), 0o600) == 0)
        case .linkOutside:
            let target = try outside.write(JSONWriter.compactText(of: usage(bytes: 999).ledgerJSON(day: day)), to: "2026-11-23.json")
            try folder.link(name, to: target)
        case .linkToFolderOutside: try folder.link(name, to: outside.path)
        }
    }

    /// A FIFO or a symbolic link in place of a day file, the lock or `usage/` itself is refused
    /// with an error naming it; nothing outside the folder is read or written, nothing blocks.
    @Test(arguments: Special.allCases, ["usage/2026-11-23.json", "usage/lock", "usage"])
    func specialFilesInPlaceOfTheLedgerAreRefusedNeverFollowed(_ special: Special, _ name: String) throws {
        let outside = TemporaryFolder()
        if name == "usage" { try? FileManager.default.removeItem(atPath: folder.file("usage")) }
        if name == "usage" && special == .fifo { #expect(mkfifo(folder.file(name), 0o600) == 0) } else { try make(special, at: name, outside: outside) }
        let before = try outside.list().map { ($0, try outside.read($0)) }
        #expect {
            try ledger.add(usage(bytes: 10), on: day)
        } throws: { error in
            guard let error = error as? DataUsageLedgerError else { return false }
            return error.code == .notRegular && error.path == folder.file(name) && error.message.contains("not a")
        }
        let after = try outside.list().map { ($0, try outside.read($0)) }
        #expect(before.elementsEqual(after) { $0 == $1 })
        if name != "usage/lock" {
            let reading = ledger.read()
            #expect(reading.days.isEmpty)  // the linked record outside is never counted
            #expect(reading.problems.map(\.code) == [.notRegular])
        }
    }

    @Test func onlyACacheFolderGetsALedger() throws {
        let plain = TemporaryFolder()
        try plain.write("mine", to: "notes.txt")
        #expect {
            try DataUsageLedger(cacheFolder: plain.path).add(usage(bytes: 1), on: day)
        } throws: { ($0 as? DataUsageLedgerError)?.code == .notACache }
        #expect(try plain.list() == ["notes.txt"])
        #expect(DataUsageLedger(cacheFolder: plain.file("missing")).read().days.isEmpty)
    }

    /// `cache clear` and eviction remove entries only; an earlier cache with a ledger (the marker
    /// lost) is adopted again, while a folder holding only a ledger, or a `usage` folder of other
    /// files, is not.
    @Test func theDiskCacheKeepsTheLedgerAndAdoptsAFolderWithOne() throws {
        let cache = try DiskCache(folder: folder.path, capacity: 10_000)
        try ledger.add(usage(bytes: 10), on: day)
        for n in 0..<20 { try cache.store(Array(repeating: UInt8(n), count: 2_000), for: ImageURL("http://127.0.0.1:9/\(n)")!) }
        #expect(cache.counters.evictions > 0)
        // An earlier cache with a ledger, its marker lost: adopted again.
        try FileManager.default.removeItem(atPath: folder.file(".imgpolicy-cache"))
        _ = try DiskCache(folder: folder.path)
        #expect(FileManager.default.fileExists(atPath: folder.file(".imgpolicy-cache")))
        let report = try DiskCache(folder: folder.path).removeAll()
        #expect(report.removed > 0 && report.failures.isEmpty)
        #expect(ledger.read().days[day] == usage(bytes: 10))
        // A folder holding only a ledger is not adopted: the ledger is written only beside the
        // marker, so without it the folder is someone else's; refused and untouched.
        let onlyLedger = TemporaryFolder()
        try onlyLedger.write("", to: "usage/lock")
        try onlyLedger.write("{}", to: "usage/2026-11-01.json")
        #expect {
            try DiskCache(folder: onlyLedger.path)
        } throws: { ($0 as? DiskCacheError)?.code == .notACache }
        #expect(try onlyLedger.list() == ["usage"] && onlyLedger.list("usage") == ["2026-11-01.json", "lock"])
        let other = TemporaryFolder()
        try other.write("my holiday", to: "usage/photos.txt")
        #expect(throws: DiskCacheError.self) { try DiskCache(folder: other.path) }
    }

    @Test func aFailedSaveKeepsTheUsageInTheRecorder() throws {
        let recorder = DataUsageRecorder()
        let plain = TemporaryFolder()
        recorder.restoreUnsaved(usage(bytes: 42))  // as if loads had been recorded
        #expect(throws: DataUsageLedgerError.self) { try DataUsageLedger(cacheFolder: plain.path).save(recorder, on: day) }
        try ledger.save(recorder, on: day)
        #expect(ledger.read().days[day] == usage(bytes: 42))
        #expect(recorder.takeUnsaved().isEmpty)
    }
}
