import Foundation
import Testing
import TestSupport

/// `imgpolicy --fetch` and `imgpolicy cache` as processes, against a real loopback server.
struct FetchCommandTests {
    let cli = CLIRunner()
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 20_000, seed: 1)),
                                             "/t.png": .ok(TestImages.png(size: 2_000, seed: 2))])
    }

    var cacheDir: String { cli.home.file("cache") }

    func itemFile(_ name: String = "item.json", original: String = "/o.png", thumbnail: String? = "/t.png") throws -> String {
        let thumbnailJSON = thumbnail.map { #", "thumbnail": "\#(server.url($0))""# } ?? ""
        return try cli.home.write(#"{"id": "x", "original": "\#(server.url(original))"\#(thumbnailJSON)}"#, to: name)
    }

    @Test func aSecondRunComesFromDisk() async throws {
        let item = try itemFile()
        let first = try await cli.run(["--network", "cellular", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("x: load thumbnail from network, 2000 bytes, "))
        let second = try await cli.run(["--network", "cellular", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(second.stdout.hasPrefix("x: load thumbnail from disk, 2000 bytes, "))
        #expect(server.hits("/t.png") == 1)
        #expect(server.hits("/o.png") == 0)
        // Without --cached, the plain decision consults the real disk cache too.
        let offline = try await cli.run(["--network", "offline", "--item", item, "--cache-dir", cacheDir, "--json"])
        #expect(offline.stdout.contains(#""rule":"offline-cached-thumbnail""#))
    }

    @Test func offlineNeverTouchesTheNetwork() async throws {
        let item = try itemFile()
        let result = try await cli.run(["--network", "offline", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("x: placeholder"))
        #expect(server.totalHits == 0)
    }

    @Test func outputWritesTheImageBytes() async throws {
        let item = try itemFile()
        let target = cli.home.file("out.png")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir, "--output", target])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))) == TestImages.png(size: 20_000, seed: 1))
    }

    /// Issue 16: `--output x.png` with nothing to write (a placeholder decision) exited 0 and left
    /// an older `x.png` in place, so a script went on to show the old picture. It exits 69, in one
    /// line, and leaves the file as it was.
    @Test func anOutputWithNothingToWriteExits69AndKeepsTheOldFile() async throws {
        let item = try itemFile()
        let target = try cli.home.write("an older picture", to: "x.png")
        let result = try await cli.run(["--network", "offline", "--item", item, "--fetch", "--cache-dir", cacheDir, "--output", target])
        #expect(result.status == 69)
        #expect(result.stdout.hasPrefix("x: placeholder"))
        #expect(result.stderr == "imgpolicy: \(target): nothing written: the decision is the placeholder (rule offline-placeholder); the file is left as it was\n")
        #expect(try cli.home.read("x.png") == "an older picture")
        #expect(server.totalHits == 0)
    }

    /// Issue 17: `--fetch --json` ended its stream of item objects with a usage object of another
    /// shape that every script had to know to skip. Each line says what it is: `"type":"item"` for
    /// an item, `"type":"usage"` for the summary, first.
    @Test func everyJSONLineOfAFetchSaysWhatItIs() async throws {
        let items = try cli.home.write("[" + ["/o.png", "/t.png"].map { #"{"id": "\#($0)", "original": "\#(server.url($0))"}"# }.joined(separator: ",") + "]",
                                       to: "items.json")
        let result = try await cli.run(["--network", "wifi", "--item", items, "--fetch", "--cache-dir", cacheDir, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        for line in lines.prefix(2) {
            #expect(line.hasPrefix(#"{"type":"item","action":"load","variant":"original","url":"#), "\(line)")
        }
        #expect(lines.last?.hasPrefix(#"{"type":"usage","usage":{"bytes":{"downloaded":22000,"#) == true, "\(lines.last ?? "")")
    }

    /// A failed item's JSON line says what failed (`errorKind`) and what is shown instead: the
    /// cached thumbnail with its source and size, or null for the placeholder.
    @Test func aFailedItemsJSONLineNamesItsFallback() async throws {
        let item = try itemFile(original: "/missing.png")
        let cellular = try await cli.run(["--network", "cellular", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(cellular.status == 0, "\(cellular.stderr)")   // the thumbnail, now on disk
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir, "--json"])
        #expect(result.status == 69)
        let first = try #require(result.stdout.split(separator: "\n").first.map(String.init))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(object["errorKind"] as? String == "httpStatus")
        let fallback = try #require(object["fallback"] as? [String: Any], "\(first)")
        #expect(fallback["variant"] as? String == "thumbnail" && fallback["source"] as? String == "disk")
        #expect(fallback["url"] as? String == server.url("/t.png") && fallback["bytes"] as? Int == 2_000)
        let none = try cli.home.write(#"{"id": "y", "original": "\#(server.url("/missing.png"))"}"#, to: "none.json")
        let placeholder = try await cli.run(["--network", "wifi", "--item", none, "--fetch", "--cache-dir", cacheDir, "--json"])
        let line = try #require(placeholder.stdout.split(separator: "\n").first.map(String.init))
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(shown["fallback"] is NSNull && shown["errorKind"] as? String == "httpStatus", "\(line)")
    }

    @Test func aServerFailureExits69AndWritesNothing() async throws {
        let item = try itemFile(original: "/missing.png", thumbnail: nil)
        let target = cli.home.file("out.png")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir, "--output", target])
        #expect(result.status == 69)
        #expect(result.stderr == "imgpolicy: \(server.url("/missing.png")): HTTP 404 (not found)\n")
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try cli.home.list().filter { $0.hasPrefix("out.png") }.isEmpty)
        let list = try await cli.run(["cache", "list", "--cache-dir", cacheDir])
        #expect(list.stdout.isEmpty)
    }

    @Test func anUnusableCacheFolderExits74() async throws {
        let item = try itemFile()
        let blocker = try cli.home.write("not a folder", to: "blocker")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", blocker])
        #expect(result.status == 74)
        #expect(result.stderr.contains("blocker"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// Holds each request until `parties` requests are in the server at the same moment, then lets
    /// them all go: a state, not a duration. Requests that arrive one at a time would each wait
    /// for company that never comes; the first to give up (after `patience`, reached only when
    /// the loads are serial) records it and the rest no longer wait.
    ///
    /// The very first request is answered at once: a habit from before issue 17, when libcurl's
    /// `CURLOPT_PIPEWAIT` held every other request to a new host until the first answer showed
    /// whether its connection could multiplex (the transport no longer asks it to over plain HTTP).
    final class Rendezvous: Sendable {
        let parties: Int
        let patience: DispatchTimeInterval = .seconds(20)
        private let arrivals = LockedList<Int>()
        private let gaveUp = LockedList<Bool>()
        private let released = DispatchSemaphore(value: 0)

        init(parties: Int) { self.parties = parties }

        func arrive() {
            arrivals.append(1)
            let count = arrivals.values.count - 1
            if count == 0 { return }
            if count == parties {
                for _ in 1..<parties { released.signal() }
                return
            }
            guard count < parties, gaveUp.values.isEmpty else { return }
            if released.wait(timeout: .now() + patience) == .timedOut { gaveUp.append(true) }
        }

        /// Whether `parties` requests were ever in the server together.
        var met: Bool { gaveUp.values.isEmpty && arrivals.values.count > parties }
    }

    @Test func anArrayLoadsConcurrentlyAndReportsInOrder() async throws {
        // Four requests held in the server at once prove the loads overlap (the transport runs
        // up to six per host); one after the other, the first would wait alone and give up.
        let rendezvous = Rendezvous(parties: 4)
        for n in 0..<12 {
            let image = TestImages.png(seed: n)
            server.route("/img\(n).png", .dynamic { _ in
                rendezvous.arrive()
                return .ok(image)
            })
        }
        let items = (0..<12).map { #"{"id": "i\#($0)", "original": "\#(server.url("/img\($0).png"))"}"# }
        let path = try cli.home.write("[" + items.joined(separator: ",") + "]", to: "many.json")
        let result = try await cli.run(["--network", "wifi", "--item", path, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 13 && lines.last?.hasPrefix("usage: ") == true)  // the last: the usage line
        for (n, line) in lines.dropLast().enumerated() { #expect(line.hasPrefix("i\(n): load original from network")) }
        #expect(rendezvous.met, "the loads never overlapped: they ran one after the other")
        for n in 0..<12 { #expect(server.hits("/img\(n).png") == 1) }
    }

    @Test func twoProcessesWritingTheSameKeyLeaveOneWholeEntry() async throws {
        server.route("/same.png", .delayed(0.1, .ok(TestImages.png(size: 300_000, seed: 5))))
        let item = try itemFile("same.json", original: "/same.png", thumbnail: nil)
        let arguments = ["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir]
        let group = DispatchGroup()
        let statuses = LockedList<Int32>()
        for _ in 0..<2 {
            group.enter()
            Thread.detachNewThread {
                let result = try? ProcessResult.run(PackagePaths.executable, arguments,
                                                    environment: ["XDG_CONFIG_HOME": cli.home.file("config")])
                statuses.append(result?.status ?? -1)
                group.leave()
            }
        }
        try await offThePool { group.wait() }
        #expect(statuses.values == [0, 0])
        let third = try await cli.run(arguments + ["--output", cli.home.file("same.png")])
        #expect(third.stdout.contains("from disk"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: cli.home.file("same.png")))) == TestImages.png(size: 300_000, seed: 5))
        #expect(try await cli.run(["cache", "stats", "--cache-dir", cacheDir]).stdout.contains("entries: 1\n"))
    }

    @Test func cacheStatsListClear() async throws {
        let item = try itemFile()
        _ = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        let stats = try await cli.run(["cache", "stats", "--cache-dir", cacheDir])
        #expect(stats.stdout.contains("entries: 1\n"))
        let list = try await cli.run(["cache", "list", "--cache-dir", cacheDir])
        #expect(list.stdout.hasSuffix("\t\(server.url("/o.png"))\n"))
        let clear = try await cli.run(["cache", "clear", "--cache-dir", cacheDir])
        #expect(clear.stdout.hasPrefix("removed 1 entries"))
        #expect(try await cli.run(["cache", "stats", "--cache-dir", cacheDir]).stdout.contains("entries: 0\n"))
    }
}
