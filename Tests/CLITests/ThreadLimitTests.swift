import Foundation
import Testing
import TestSupport

/// Too few threads never hang the command (issue 16 item 7, probe 16b finding 3): libdispatch,
/// refused a thread, waits and tries again for ever, so the command checks first that it can run
/// the threads it needs, and refuses with one line (74) when it cannot. Run as an unprivileged
/// user (root is not bound by `RLIMIT_NPROC`) under every process limit from 1 to 16.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ThreadLimitTests {
    static let unprivileged = "65533"
    static var canRunUnprivileged: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")
    }

    @Test(.enabled(if: canRunUnprivileged, "needs root, setpriv and prlimit (util-linux)"))
    func tooFewThreadsIsOneLineNeverAHang() async throws {
        let home = TemporaryFolder()
        chmod(home.path, 0o777)
        let png = try #require(FileManager.default.contents(atPath: PackagePaths.root + "/examples/images/sunset-original.png"))
        let server = try TestHTTPServer(routes: ["/p.png": .ok([UInt8](png))])
        let item = try home.write(#"{"id": "p", "original": "\#(server.url("/p.png"))"}"#, to: "item.json")
        chmod(item, 0o644)
        for limit in 1...16 {
            for arguments in [["network"], ["--fetch", "--item", item, "--cache-dir", home.file("cache-\(limit)"), "--network", "wifi"]] {
                let result = try await offThePool {
                    try ProcessResult.run("/usr/bin/timeout", ["-s", "KILL", "60", "/usr/bin/prlimit", "--nproc=\(limit)", "/usr/bin/setpriv",
                                                               "--reuid=\(Self.unprivileged)", "--regid=\(Self.unprivileged)", "--clear-groups",
                                                               PackagePaths.executable] + arguments,
                                          environment: ["HOME": home.path, "TMPDIR": home.path])
                }
                let context = "\(arguments[0]) under --nproc=\(limit): status \(result.status), stderr \(result.stderr.prefix(300))"
                #expect(!result.crashed && result.status != 137 && result.status < 128, "\(context)")
                if result.status != 0 {
                    #expect(result.status == 74 && result.stderr.hasPrefix("imgpolicy: too few threads") &&
                            result.stderr.split(separator: "\n").count == 1, "\(context)")
                }
            }
        }
    }
}
