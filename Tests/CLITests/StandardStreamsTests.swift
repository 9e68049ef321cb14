import Foundation
import Testing
import TestSupport

/// Standard output that loses what is written to it, and standard descriptors the caller closed,
/// run through a real shell redirection: the command never reports success for a report nobody
/// received, and never reads or writes a descriptor of the runtime's in their place.
struct StandardStreamsTests {
    let home = TemporaryFolder()

    /// Runs `imgpolicy arguments` with `redirection` applied by `/bin/sh` (e.g. `>/dev/full`).
    func run(_ arguments: [String], _ redirection: String) async throws -> ProcessResult {
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config"), "XDG_CACHE_HOME": home.file("cache")]
        return try await offThePool {
            try ProcessResult.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" \(redirection)", PackagePaths.executable] + arguments,
                                  environment: environment, workingDirectory: PackagePaths.root)
        }
    }

    @Test("a report written to a full disk is a failure, exit 74 with one line", arguments: [
        ["--network", "wifi", "--item", "examples/item.json"],                 // the plain decision's own reading
        ["decide", "--network", "wifi", "--item", "examples/item.json", "--json"],
        ["policy", "table"],                                                   // more than a buffer's worth
        ["policy", "show", "--json"],
        ["--version"],
    ])
    func aFullStandardOutputExits74(arguments: [String]) async throws {
        let result = try await run(arguments, ">/dev/full")
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr == "imgpolicy: standard output: no space left on device\n")
    }

    @Test func aClosedStandardOutputExits74AndNothingElseReceivesTheReport() async throws {
        let result = try await run(["--network", "wifi", "--item", "examples/item.json"], ">&-")
        #expect(result.status == 74)
        #expect(result.stderr == "imgpolicy: standard output: bad file descriptor\n")
    }

    @Test("a closed standard input is read as such, on every path", arguments: [
        ["--network", "wifi", "--item", "-"],
        ["--network", "wifi", "--item", "-", "--fetch", "--cache-dir", "CACHE"],
        ["--network", "wifi", "--item", "-", "-v"],
    ])
    func aClosedStandardInputIsABadDescriptorOnEveryPath(arguments: [String]) async throws {
        let result = try await run(arguments.map { $0 == "CACHE" ? home.file("c") : $0 }, "<&-")
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr == "imgpolicy: <stdin>: bad file descriptor\n")
    }

    @Test func aDecisionToDevNullStillSucceeds() async throws {
        let result = try await run(["--network", "wifi", "--item", "examples/item.json"], ">/dev/null")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
    }
}

/// `--cache-dir` naming something that is not a folder: a plain decision refuses it as `--fetch`
/// and `cache` do (it used to decide as if the cache were empty: "placeholder" offline although
/// the real cache held the image).
struct CacheFolderKindTests {
    let cli = CLIRunner()

    @Test("a cache folder that is not a folder is exit 74 naming it", arguments: ["file", "fifo", "dangling", "loop", "/dev/null"])
    func aDecisionRefusesACacheFolderThatIsNotAFolder(kind: String) async throws {
        let path = kind.hasPrefix("/") ? kind : cli.home.file(kind)
        switch kind {
        case "file": #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "dangling": #expect(symlink(cli.home.file("nothing"), path) == 0)
        case "loop": #expect(symlink(path, path) == 0)
        default: break
        }
        for extra in [[], ["--json"], ["--fetch"]] {
            let result = try await cli.run(["--network", "offline", "--item", "examples/item.json", "--cache-dir", path] + extra)
            #expect(result.status == 74, "\(extra): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.hasPrefix("imgpolicy: \(path)") || result.stderr.contains("cannot open the cache"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("an empty --cache-dir is a usage error for every command", arguments: [
        ["--network", "wifi", "--item", "examples/item.json"], ["--network", "wifi", "--item", "examples/item.json", "--fetch"],
        ["cache", "stats"], ["cache", "clear"], ["stats"],
    ])
    func anEmptyCacheFolderPathIsAUsageError(arguments: [String]) async throws {
        let result = try await cli.run(arguments + ["--cache-dir", ""])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr == "imgpolicy: --cache-dir: the path is empty\n")
    }

    @Test func aMissingCacheFolderIsStillAnEmptyCacheAndIsNotCreated() async throws {
        let path = cli.home.file("not-yet")
        let result = try await cli.run(["--network", "offline", "--item", "examples/item.json", "--cache-dir", path])
        #expect(result.status == 0 && result.stdout.contains("placeholder"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

/// An `--output` that cannot be written is refused before the image is downloaded: no byte of
/// the user's data is spent on it (it used to be refused after the download).
struct OutputCheckedBeforeFetchingTests {
    let cli = CLIRunner()

    @Test("a bad --output is refused before any request", arguments: ["folder", "dangling", "no-folder", "empty"])
    func aBadOutputIsRefusedBeforeAnyRequest(kind: String) async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png())])
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        let output: String
        switch kind {
        case "folder": output = cli.home.path
        case "dangling":
            output = cli.home.file("link")
            #expect(symlink(cli.home.file("nothing"), output) == 0)
        case "no-folder": output = cli.home.file("missing/out.png")
        default: output = ""
        }
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cli.home.file("cache"), "--output", output])
        #expect(result.status == (kind == "empty" ? 64 : 74), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(server.hits("/o.png") == 0)
    }

    /// Issue 16: a folder that cannot be written and a name longer than the file system allows
    /// were found only when the image was written, after its bytes were spent.
    @Test("an --output that cannot be written is refused before any request", arguments: ["read-only folder", "long name", "long path"])
    func anOutputThatCannotBeWrittenIsRefusedBeforeAnyRequest(kind: String) async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png())])
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        let output: String
        let message: String
        switch kind {
        case "read-only folder":
            let folder = cli.home.file("read-only")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            output = folder + "/out.png"
            if getuid() == 0 {
                #expect(try ProcessResult.run("/usr/bin/chattr", ["+i", folder]).status == 0)
            } else {
                #expect(chmod(folder, 0o555) == 0)
            }
            message = "cannot write the image: the folder \(folder) cannot be written"
        case "long name":
            output = cli.home.file(String(repeating: "a", count: 300) + ".png")
            message = "cannot write the image: the name is 304 bytes long, longer than the 255 bytes"
        default:
            output = cli.home.path + String(repeating: "/.", count: 2100) + "/out.png"
            message = "cannot write the image: the path is"
        }
        defer { _ = try? ProcessResult.run("/usr/bin/chattr", ["-i", cli.home.file("read-only")]) }
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cli.home.file("cache"), "--output", output])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("imgpolicy: \(output): \(message)"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(server.hits("/o.png") == 0)
    }

    /// A name that fits the file system is written, however long: the temporary file beside it
    /// (`.NAME.tmp-XXXXXX`) used to be 12 bytes too long for a name of 244 to 255 bytes.
    @Test func aLongNameThatFitsIsWritten() async throws {
        let image = TestImages.png()
        let server = try TestHTTPServer(routes: ["/o.png": .ok(image)])
        let item = try cli.home.write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        let output = cli.home.file(String(repeating: "b", count: 251) + ".png")
        let result = try await cli.run(["--network", "wifi", "--item", item, "--fetch", "--cache-dir", cli.home.file("cache"), "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))) == image)
        #expect(try cli.home.list().filter { $0.hasPrefix(".b") }.isEmpty)
    }
}
