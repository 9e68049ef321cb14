import Fetch
import Foundation
import Policy
import Testing
import TestSupport
import Support


/// A download resumed across two processes: `imgpolicy --fetch` is killed (SIGKILL) once part of
/// a body arrived and was kept; a second run asks only for the rest (`Range` + `If-Range`), and
/// the server sends only that.
struct ResumeCommandTests {
    let home = TemporaryFolder()

    @Test(.disabled(if: runningUnderThreadSanitizer, "kill timing; runs in scripts/test.sh"))
    func aFetchKilledMidBodyIsResumedByTheNextRun() async throws {
        let body = TestImages.png(size: 1_000_000, seed: 11)
        let server = try TestHTTPServer(routes: ["/big.png": .request { request in
            if request.hit == 1 {
                // A quarter at once, then 2 KiB a second: above the transport's low-speed limit
                // (1 KiB/s), so that the first run is still receiving when the test kills it,
                // however long a loaded machine takes to notice the kept bytes.
                return .burstThenDrip(200, ["ETag: \"b1\"", "Content-Type: image/png"], body, burst: 250_000, chunk: 2048, interval: 1)
            }
            if request.header("If-Range") == "\"b1\"", let range = request.header("Range"), range.hasPrefix("bytes="),
               range.hasSuffix("-"), let start = Int(range.dropFirst(6).dropLast()), start < body.count {
                return .headers(206, ["ETag: \"b1\"", "Content-Range: bytes \(start)-\(body.count - 1)/\(body.count)"], Array(body[start...]))
            }
            return .headers(200, ["ETag: \"b1\"", "Content-Type: image/png"], body)
        }])
        let cacheDir = home.file("cache")
        let item = try home.write(#"{"id": "big", "original": "\#(server.url("/big.png"))"}"#, to: "item.json")
        let environment = ["XDG_CONFIG_HOME": home.file("config"), "HOME": home.path]
        let arguments = ["--fetch", "--item", item, "--cache-dir", cacheDir, "--network", "wifi"]

        // The first run: killed once a checkpoint (64 KiB) of the body is on disk.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "IMGPOLICY_NETWORK")
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        let errorLog = home.file("first-run.stderr")
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog))
        try process.run()
        let partialFolder = cacheDir + "/partial"
        @Sendable func keptBytes() -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: partialFolder)) ?? []
            return names.filter { !$0.hasPrefix("partial-") }.compactMap {
                (try? FileManager.default.attributesOfItem(atPath: partialFolder + "/" + $0))?[.size] as? Int
            }.max() ?? 0
        }
        // Watched, and killed, from a thread of its own: in the whole suite the cooperative pool
        // can be starved for longer than the low-speed limit, and the run would then retry and
        // finish before a look on the pool saw what it kept.
        let pid = process.processIdentifier
        let killedWhileRunning = try await offThePool { () -> Bool in
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if keptBytes() > 64 << 10 { return kill(pid, SIGKILL) == 0 }
                usleep(2_000)
            }
            return false
        }
        #expect(killedWhileRunning, "kept \(keptBytes()); sent \(server.bytesSent("/big.png")); \((try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "")")
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(await waitUntil { server.responsesEnded("/big.png") == 1 })
        let sentToTheFirst = server.bytesSent("/big.png")

        // The second run asks for the rest only.
        let second = try ProcessResult.run(PackagePaths.executable, arguments, environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let requests = server.requests("/big.png")
        #expect(requests.count == 2)
        let range = try #require(requests.last?.header("Range"))
        let offset = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
        #expect(offset >= 64 << 10 && requests.last?.header("If-Range") == "\"b1\"")
        let sentToTheSecond = server.bytesSent("/big.png") - sentToTheFirst
        #expect(sentToTheSecond < body.count - offset + 1_000, "the second run got \(sentToTheSecond) bytes")
        let disk = try DiskCache(folder: cacheDir)
        #expect(disk.image(for: ImageURL(server.url("/big.png"))!) == body)
        #expect(disk.partialStatistics.count == 0)
    }
}
