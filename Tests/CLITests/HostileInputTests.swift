import Foundation
import Testing
import TestSupport

/// Hostile inputs as real processes: special files where files are expected or written, control
/// characters from files and servers, credentials and bad hosts in URLs. Nothing may hang, crash,
/// replace a device, or reach the terminal raw.
struct HostileInputTests {
    let cli = CLIRunner()
    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 20_000, seed: 1))])
    }

    var cacheDir: String { cli.home.file("cache") }

    // MARK: - Special files

    /// A FIFO in the test's folder (no process ever writes or reads it unless a test says so).
    func fifo(_ name: String) throws -> String {
        let path = cli.home.file(name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try #require(mkfifo(path, 0o644) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        return path
    }

    /// A character device like /dev/null (1, 3) made in the test's folder; needs root.
    func nullDevice(_ name: String) throws -> String? {
        guard getuid() == 0 else { return nil }
        let path = cli.home.file(name)
        try #require(mknod(path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)  /* makedev(1, 3) */) == 0, "mknod: \(String(cString: strerror(errno)))")
        return path
    }

    /// A bound Unix socket in the test's folder.
    func socketFile(_ name: String) throws -> (path: String, fd: Int32) {
        let path = cli.home.file(name)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "bind: \(String(cString: strerror(errno)))")
        return (path, fd)
    }

    func kind(of path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    /// Every way the command reads a file, given a FIFO: a clear error at once, never a hang.
    @Test func aFIFOAsAnInputFileIsRefusedAtOnce() async throws {
        let item = try cli.home.write(#"{"original": "https://a.example/o"}"#, to: "item.json")
        let path = try fifo("input.fifo")
        let runs: [[String]] = [
            ["--network", "wifi", "--item", path],
            ["--network", "wifi", "--item", item, "--policy", path],
            ["--network", "wifi", "--item", item, "--settings", path],
            ["settings", "list", "--settings", path],
            ["settings", "get", "x", "--settings", path],
            ["settings", "set", "x", "1", "--settings", path],
            ["policy", "check", path],
        ]
        for arguments in runs {
            let result = try await cli.run(arguments)
            #expect(result.status == 66, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "imgpolicy: \(path): is a FIFO, not a regular file\n", "\(arguments)")
            #expect(kind(of: path) == S_IFIFO)
        }
    }

    @Test func aDefaultSettingsFileThatIsAFIFOIsRefusedAtOnce() async throws {
        let path = try fifo("config/imgpolicy/settings.json")
        #expect(path == cli.settingsPath)
        let item = try cli.home.write(#"{"original": "https://a.example/o"}"#, to: "item.json")
        for arguments in [["--network", "wifi", "--item", item], ["settings", "list"]] {
            let result = try await cli.run(arguments)
            #expect(result.status == 66)
            #expect(result.stderr == "imgpolicy: \(path): is a FIFO, not a regular file\n")
        }
    }

    @Test func devicesSocketsAndFoldersAreNotInputFiles() async throws {
        let (socketPath, fd) = try socketFile("s.sock")
        defer { close(fd) }
        var cases = [("/dev/zero", "a character device"), (socketPath, "a socket"), (cli.home.path, "a directory")]
        if let device = try nullDevice("null") { cases.append((device, "a character device")) }
        for (path, kind) in cases {
            let result = try await cli.run(["--network", "wifi", "--item", path])
            #expect(result.status == 66, "\(path): \(result.stderr)")
            #expect(result.stderr == "imgpolicy: \(path): is \(kind), not a regular file\n")
        }
    }

    /// `settings set` on a path it refuses (a device, a FIFO, a link to nothing) creates nothing:
    /// no `.lock` next to it (with `--settings /dev/null` that would be `/dev/null.lock`).
    @Test func aRefusedSettingsPathCreatesNoLockFile() async throws {
        let fifoPath = try fifo("refused/fifo.json")
        try cli.home.link("refused/dangling.json", to: cli.home.file("refused/missing.json"))
        var cases = [(fifoPath, Int32(66)), (cli.home.file("refused/dangling.json"), 74)]
        if let device = try nullDevice("refused/mydev") {
            cases.append((device, 66))
        } else {
            Issue.record("skipped the device case: mknod needs root (CI runs as root)")
        }
        for (path, status) in cases {
            let result = try await cli.run(["settings", "set", "a", "true", "--settings", path])
            #expect(result.status == status, "\(path): \(result.stderr)")
        }
        let left = try cli.home.list("refused")
        #expect(left.allSatisfy { !$0.hasSuffix(".lock") }, "\(left)")
        #expect(left.count == cases.count, "\(left)")
    }

    // MARK: - No usable HOME

    /// An item whose image the local server has.
    func serverItem() throws -> String {
        try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
    }

    /// HOME that does not exist (Debian's service users have `/nonexistent`), with empty XDG
    /// variables: commands that need the default cache or settings fail in one clear line (74),
    /// create nothing, and a plain decision still works.
    @Test func aMissingHomeIsNeverCreated() async throws {
        let item = try serverItem()
        let home = cli.home.file("nonexistent")
        let environment = ["HOME": home, "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": ""]
        let fetch = try await cli.run(["--network", "wifi", "--item", item, "--fetch"], environment: environment)
        #expect(fetch.status == 74, "\(fetch.stderr)")
        #expect(fetch.stderr.hasPrefix("imgpolicy: ") && fetch.stderr.contains("pass --cache-dir DIR or set HOME"), "\(fetch.stderr)")
        #expect(fetch.stderr.split(separator: "\n").count == 1)
        #expect(server.totalHits == 0)
        let set = try await cli.run(["settings", "set", "a", "true"], environment: environment)
        #expect(set.status == 74, "\(set.stderr)")
        #expect(set.stderr.contains("pass --settings FILE or set HOME"), "\(set.stderr)")
        let plain = try await cli.run(["--network", "wifi", "--item", item], environment: environment)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.hasPrefix("x: load original"))
        #expect(try await cli.run(["settings", "list"], environment: environment).status == 0)
        #expect(!FileManager.default.fileExists(atPath: home))
        // --cache-dir and --settings still work without a HOME.
        let explicit = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir], environment: environment)
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home))
    }

    /// HOME unset: nothing is created in the current directory (`./.cache`, `./.config`).
    @Test func anUnsetHomeCreatesNothingInTheCurrentDirectory() async throws {
        let item = try serverItem()
        let workingDirectory = cli.home.file("cwd")
        try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: false)
        func run(_ arguments: [String]) async throws -> CLIRunner.Result {
            let script = #"unset HOME XDG_CACHE_HOME XDG_CONFIG_HOME; exec "$0" "$@""#
            let (result, hung) = try await offThePool {
                try CLIRunner.run("/bin/sh", ["-c", script, PackagePaths.executable] + arguments, environment: [:],
                                  stdin: nil, workingDirectory: workingDirectory)
            }
            #expect(!hung)
            return result
        }
        let fetch = try await run(["--network", "wifi", "--item", item, "--fetch"])
        #expect(fetch.status == 74, "\(fetch.stderr)")
        #expect(fetch.stderr.contains("pass --cache-dir DIR or set HOME"), "\(fetch.stderr)")
        let set = try await run(["settings", "set", "a", "true"])
        #expect(set.status == 74, "\(set.stderr)")
        let plain = try await run(["--network", "wifi", "--item", item])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try cli.home.list("cwd").isEmpty)
        #expect(server.totalHits == 0)
    }

    @Test func standardInputStillReadsAPipe() async throws {
        let result = try await cli.run(["--network", "wifi", "--item", "-"], stdin: #"[{"id": "p", "original": "https://a.example/o"}]"#)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("p: load original https://a.example/o"))
    }

    // MARK: - --output

    func fetchTo(_ target: String) async throws -> CLIRunner.Result {
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        return try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir, "--output", target])
    }

    @Test func outputDashIsAUsageErrorNotAFileNamedDash() async throws {
        let result = try await fetchTo("-")
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("imgpolicy: --output -: "), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: PackagePaths.root + "/-"), "a file named - was written in the working folder")
        #expect(server.hits("/o.png") == 0, "refused before anything was fetched")
        #expect(!FileManager.default.fileExists(atPath: cacheDir + "/usage"), "nothing recorded")
        #expect(result.stdout.isEmpty)
    }

    @Test func outputToDevNullWritesThroughIt() async throws {
        let result = try await fetchTo("/dev/null")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(of: "/dev/null") == S_IFCHR, "/dev/null is no longer a character device")
    }

    @Test func outputToACharacterDeviceWritesThroughIt() async throws {
        guard let device = try nullDevice("null") else {
            Issue.record("skipped: mknod needs root (CI runs as root)")
            return
        }
        let result = try await fetchTo(device)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(of: device) == S_IFCHR, "the device was replaced")
        #expect(try cli.home.list().filter { $0.contains("null") } == ["null"], "a temporary file was left")
    }

    @Test func outputToAFIFOWithAReaderWritesTheBytes() async throws {
        let path = try fifo("out.fifo")
        // Opened for reading first (without waiting for a writer), so the command finds a reader.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let result = try await fetchTo(path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(of: path) == S_IFIFO)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(reader, &chunk, chunk.count)
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        #expect(received == TestImages.png(size: 20_000, seed: 1))
    }

    @Test func outputToAFIFOWithoutAReaderFailsAtOnce() async throws {
        let path = try fifo("out.fifo")
        let result = try await fetchTo(path)
        #expect(result.status == 74)
        #expect(result.stderr == "imgpolicy: \(path): cannot write the image: is a FIFO that no process reads; start the reader first\n")
        #expect(kind(of: path) == S_IFIFO)
    }

    @Test func outputToASocketOrAFolderIsRefused() async throws {
        let (socketPath, fd) = try socketFile("out.sock")
        defer { close(fd) }
        for (path, kind) in [(socketPath, "a socket"), (cli.home.path, "a directory")] {
            let result = try await fetchTo(path)
            #expect(result.status == 74)
            #expect(result.stderr.hasPrefix("imgpolicy: \(path): cannot write the image: is \(kind);"), "\(result.stderr)")
        }
        #expect(kind(of: socketPath) == S_IFSOCK)
    }

    @Test func outputThroughASymbolicLinkReplacesItsTargetAndKeepsTheLink() async throws {
        let target = try cli.home.write("old", to: "real/out.png")
        chmod(target, 0o640)
        try cli.home.link("link.png", to: target)
        let result = try await fetchTo(cli.home.file("link.png"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(of: cli.home.file("link.png")) == S_IFLNK)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))) == TestImages.png(size: 20_000, seed: 1))
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o640, "the replaced file keeps its permissions")
        #expect(try cli.home.list("real") == ["out.png"])
    }

    @Test func outputThroughADanglingLinkIsRefused() async throws {
        try cli.home.link("link.png", to: cli.home.file("missing/out.png"))
        let result = try await fetchTo(cli.home.file("link.png"))
        #expect(result.status == 74)
        #expect(result.stderr.contains("link.png: cannot write the image: is a symbolic link to a missing file"), "\(result.stderr)")
        #expect(kind(of: cli.home.file("link.png")) == S_IFLNK)
    }

    // MARK: - Control characters

    @Test func controlCharactersFromAnItemFileAreEscaped() async throws {
        let item = try cli.home.write(#"[{"id": "a\u001b]0;pwned\u0007\u001b[2J\nfake: load", "original": "https://a.example/o"}, {"id": "b\u009b31m\u202e", "original": "https://a.example/p"}]"#, to: "item.json")
        let result = try await cli.run(["--network", "wifi", "--item", item])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix(#"a\u{1B}]0;pwned\u{7}\u{1B}[2J\u{A}fake: load: load original https://a.example/o (rule "#))
        #expect(lines[1].hasPrefix(#"b\u{9B}31m\u{202E}: load original"#))
        let explained = try await cli.run(["--network", "wifi", "--item", item, "--explain"])
        #expect(!explained.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(explained.stdout.contains(#"a\u{1B}]0;pwned\u{7}\u{1B}[2J\u{A}fake: load: policy default, "#))
    }

    /// Line and paragraph separators and the bidi marks break or reorder a line like the controls.
    @Test func separatorsAndBidiMarksFromAnItemFileAreEscaped() async throws {
        let item = try cli.home.write(#"{"id": "a\u2028b\u2029c\u200ed\u200fe\u061cf\u2066g", "original": "https://a.example/o"}"#, to: "item.json")
        let result = try await cli.run(["--network", "wifi", "--item", item])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix(#"a\u{2028}b\u{2029}c\u{200E}d\u{200F}e\u{61C}f\u{2066}g: load original"#), "\(result.stdout)")
        #expect(!result.stdout.unicodeScalars.contains { [0x2028, 0x2029, 0x200E, 0x200F, 0x061C, 0x2066].contains($0.value) })
    }

    @Test func controlCharactersFromAPolicyFileAreEscapedInTextAndJSON() async throws {
        let policy = try cli.home.write(#"{"rules": [{"name": "all", "action": "placeholder", "reason": "r\u001b[31mred\nx"}]}"#, to: "p.json")
        let text = try await cli.run(["--network", "wifi", "--item", "examples/item.json", "--policy", policy])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.hasSuffix(#"(rule all: r\u{1B}[31mred\u{A}x)"# + "\n"), "\(text.stdout)")
        #expect(text.stdout.split(separator: "\n").count == 1)
        let explained = try await cli.run(["--network", "wifi", "--item", "examples/item.json", "--policy", policy, "--explain", "--json"])
        #expect(explained.stdout.contains(#""reason":"r\u001b[31mred\nx""#), "\(explained.stdout)")
        #expect(!explained.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(!explained.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    @Test func controlCharactersInErrorsAreEscaped() async throws {
        let key = try cli.home.write(#"{"original": "https://a.example/o", "\u001b]0;x\u0007": 1}"#, to: "key.json")
        let badKey = try await cli.run(["--network", "wifi", "--item", key])
        #expect(badKey.status == 65)
        // The JSON reader quotes a key as JSON does (\u001b); nothing raw reaches the terminal.
        #expect(badKey.stderr.contains(#"unknown key "\u001b]0;x\u0007""#), "\(badKey.stderr)")
        #expect(!badKey.stderr.dropLast().unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(badKey.stderr)")
        let name = cli.home.file("no\u{1B}[2J\nsuch.json")
        let missing = try await cli.run(["--network", "wifi", "--item", name])
        #expect(missing.status == 66)
        #expect(missing.stderr == "imgpolicy: \(cli.home.path)/no\\u{1B}[2J\\u{A}such.json: no such file\n")
    }

    @Test func controlCharactersFromASettingsFileAreEscaped() async throws {
        try cli.home.write("{\"a\\u001b[2J\\nb\": \"v\\u0007\", \"alwaysDownloadOriginalImage\": true}", to: "config/imgpolicy/settings.json")
        let result = try await cli.run(["settings", "list"])
        #expect(result.status == 0, "\(result.stderr)")
        // String values are shown as JSON strings, escaped already.
        #expect(result.stdout == "a\\u{1B}[2J\\u{A}b = \"v\\u0007\"\nalwaysDownloadOriginalImage = true\n")
        let get = try await cli.run(["settings", "get", "a\u{1B}[2J\nb"])
        #expect(get.stdout == "\"v\\u0007\"\n")
    }

    /// A server's Content-Type reaches the text output of `--fetch` (the "not an image" error):
    /// escaped on standard output and standard error, and in JSON.
    @Test func aServersContentTypeIsEscaped() async throws {
        server.route("/evil.png", .ok(Array("<html></html>".utf8), contentType: "text/html\u{1B}]0;pwned\u{07}\u{1B}[2J"))
        let item = try cli.home.write(#"{"id": "e", "original": "\#(server.url("/evil.png"))"}"#, to: "item.json")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 69)
        #expect(server.hits("/evil.png") == 1)
        #expect(result.stdout.contains("text/html\\u{1B}]0;pwned"), "\(result.stdout)")
        #expect(!result.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result.stdout)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result.stderr)")
        let json = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir, "--json"])
        #expect(!json.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "JSON output escapes: \(json.stdout)")
    }

    // MARK: - URLs

    @Test(arguments: [
        ("https://user:hunter2@127.0.0.1/o.png", "credentials in URLs are not accepted"),
        ("https://bücher.example/o.png", "is not ASCII"),
        ("https://127.0.0.1:99999/o.png", #"the port "99999" is not a number from 1 to 65535"#),
        ("https://127.0.0.1:abc/o.png", #"the port "abc" is not a number from 1 to 65535"#),
        ("https://127.0.0.1/" + String(repeating: "x", count: 65_536), "longer than the limit of 8192"),
    ])
    func aBadURLIsRefusedWhenTheItemIsRead(_ url: String, _ message: String) async throws {
        let item = try cli.home.write("{\n  \"id\": \"x\",\n  \"original\": \"\(url)\"\n}", to: "item.json")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cacheDir])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("imgpolicy: \(item): line 3: \"original\": "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("hunter2"))
        #expect(result.stdout.isEmpty)
        #expect(server.totalHits == 0)
        if FileManager.default.fileExists(atPath: cacheDir) {
            #expect(try await cli.run(["cache", "list", "--cache-dir", cacheDir]).stdout.isEmpty)
        }
    }
}
