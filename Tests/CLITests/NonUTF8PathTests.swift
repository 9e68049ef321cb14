import Foundation
import Policy
import Testing
import TestSupport
import Support

/// File names that are not UTF-8 (the byte 0xFF) in every path-taking option and path variable:
/// the path works when it exists (or its folder does, for a UTF-8 file name), messages show it
/// with `\xFF`, nothing is created under a repaired name (U+FFFD), and nothing crashes.
struct NonUTF8PathTests {
    let cli = CLIRunner()
    let folder = TemporaryFolder()

    /// `text` with each `<FF>` as the byte 0xFF, as the bytes of a path.
    static func bytes(_ text: String) -> [UInt8] {
        Array(text.replacingOccurrences(of: "<FF>", with: "\u{1}").utf8).map { $0 == 1 ? 0xFF : $0 }
    }

    /// The folder's path followed by `/` and `name` (`<FF>` for the byte), as bytes.
    func path(_ name: String) -> [UInt8] { Self.bytes(folder.path + "/" + name) }

    /// Writes `text` to the file `name` (`<FF>` for the byte) in the folder (which must exist).
    func write(_ text: String, to name: String) {
        let fd = Self.withPath(path(name)) { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        #expect(fd >= 0)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// The names in the folder (or `sub`), each shown with `\xHH` for bytes that are not UTF-8.
    func list(_ sub: String = "") -> [String] {
        guard let listing = Self.withPath(sub.isEmpty ? Self.bytes(folder.path) : path(sub), { opendir($0) }) else { return [] }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(PathBytes.displayed(name)) }
        }
        return names.sorted()
    }

    /// Calls `body` with `bytes` as a C string (the bytes unchanged, even when not UTF-8).
    static func withPath<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    /// The content of the file `name` (`<FF>` for the byte), or nil.
    func read(_ name: String) -> String? {
        let fd = Self.withPath(path(name)) { open($0, O_RDONLY) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = Glibc.read(fd, &buffer, buffer.count)
        return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// Runs `imgpolicy` with `arguments` (`<FF>` for the byte 0xFF; `DIR` for the folder's path)
    /// and `environment` likewise, through `sh`, which passes the bytes unchanged.
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIRunner.Result {
        func quoted(_ text: String) -> String {
            let octal = text.replacingOccurrences(of: "DIR", with: folder.path).replacingOccurrences(of: "<FF>", with: "\\0377")
            return "\"$(printf '%b' '\(octal)')\""
        }
        let exports = environment.sorted { $0.key < $1.key }.map { "export \($0.key)=\(quoted($0.value)); " }.joined()
        let script = exports + "exec \"$0\" " + arguments.map(quoted).joined(separator: " ")
        let env = ["HOME": cli.home.path, "XDG_CONFIG_HOME": cli.home.file("config"), "XDG_CACHE_HOME": cli.home.file("cache")]
        let (result, hung) = try await offThePool {
            try CLIRunner.run("/bin/sh", ["-c", script, PackagePaths.executable], environment: env, stdin: nil, workingDirectory: PackagePaths.root)
        }
        #expect(!hung && !result.crashed, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.contains("\u{FFFD}") && !result.stdout.contains("\u{FFFD}"), "a repaired name was shown: \(result.stderr)")
        return result
    }

    static let item = #"{"id": "x", "original": "http://127.0.0.1:9/o.png"}"#
    static let policy = #"{"rules": [{"name": "mine", "action": "placeholder", "reason": "from the file"}]}"#

    @Test func inputFilesWithAByteThatIsNotUTF8AreRead() async throws {
        write(Self.item, to: "i<FF>.json")
        write(Self.policy, to: "p<FF>.json")
        write(#"{"alwaysDownloadOriginalImage": true}"#, to: "s<FF>.json")
        let decision = try await run(["--network", "wifi", "--item", "DIR/i<FF>.json", "--policy", "DIR/p<FF>.json"])
        #expect(decision.status == 0 && decision.stdout == "x: placeholder (rule mine: from the file)\n", "\(decision.stderr)")
        let parsed = try await run(["decide", "--item=DIR/i<FF>.json", "--policy=DIR/p<FF>.json", "--network", "wifi", "--json"])
        #expect(parsed.status == 0 && parsed.stdout.contains(#""rule":"mine""#), "\(parsed.stderr)")
        let check = try await run(["policy", "check", "DIR/p<FF>.json"])
        #expect(check.stdout == "\(folder.path)/p\\xFF.json: ok (1 rules, 0 cases)\n", "\(check.stderr)")
        let show = try await run(["policy", "show", "DIR/p<FF>.json"])
        #expect(show.status == 0 && show.stdout.hasPrefix("policy p\\xFF (file \(folder.path)/p\\xFF.json)\n"), "\(show.stdout)")
        let table = try await run(["policy", "table", "DIR/p<FF>.json"])
        #expect(table.status == 0 && table.stdout.contains("-> placeholder (mine)"))
        let get = try await run(["settings", "get", "alwaysDownloadOriginalImage", "--settings", "DIR/s<FF>.json"])
        #expect(get.status == 0 && get.stdout == "true\n", "\(get.stderr)")
        #expect(list() == ["i\\xFF.json", "p\\xFF.json", "s\\xFF.json"])
    }

    /// Errors name the path with `\xFF`: a file that is not valid, a missing file (exit 64: it names
    /// nothing), a value that is no path.
    @Test func errorsShowTheBytes() async throws {
        write(#"{"id": "x"}"#, to: "i<FF>.json")
        let bad = try await run(["--network", "wifi", "--item", "DIR/i<FF>.json"])
        #expect(bad.status == 65)
        #expect(bad.stderr.hasPrefix("imgpolicy: \(folder.path)/i\\xFF.json: line 1: "), "\(bad.stderr)")
        let missing = try await run(["--network", "wifi", "--item", "DIR/m<FF>.json"])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("imgpolicy: argument 4 \"\(folder.path)/m\\xFF.json\" is not UTF-8 and names nothing that exists"))
        #expect(missing.stderr.split(separator: "\n").count == 1)
        let network = try await run(["--network", "wifi<FF>", "--item", "DIR/i<FF>.json"])
        #expect(network.status == 64 && network.stderr.contains("\"wifi\\xFF\""))
        let missingFolder = try await run(["--network", "wifi", "--item", "DIR/d<FF>/i.json"])
        #expect(missingFolder.status == 64 && missingFolder.stderr.contains("\"\(folder.path)/d\\xFF/i.json\""))
    }

    /// Issue 16: a variable's value that is not UTF-8 was shown repaired, as U+FFFD (which `run`
    /// refuses to see); it is shown with `\xHH`, as arguments are.
    @Test func variablesThatAreNotUTF8AreShownWithTheirBytes() async throws {
        let network = try await run(["--item", "examples/item.json"], environment: ["IMGPOLICY_NETWORK": "wifi<FF>"])
        #expect(network.status == 64)
        #expect(network.stderr.hasPrefix(#"imgpolicy: IMGPOLICY_NETWORK="wifi\xFF" is not a network state"#), "\(network.stderr)")
        let level = try await run(["--network", "wifi", "--item", "examples/item.json"], environment: ["IMGPOLICY_LOG_LEVEL": "x<FF>"])
        #expect(level.status == 64)
        #expect(level.stderr.hasPrefix(#"imgpolicy: IMGPOLICY_LOG_LEVEL="x\xFF" is not a log level"#), "\(level.stderr)")
        let bus = try await run(["network"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/b<FF>"])
        #expect(bus.stdout.contains(#"unix:path=/nonexistent/b\xFF ($DBUS_SYSTEM_BUS_ADDRESS)"#), "\(bus.stdout)")
    }

    /// Issue 16: a HOME that is not UTF-8 and does not exist refused every command, `--version`
    /// and `--help` included. It is a HOME that does not exist: only what needs a default folder
    /// fails (74, as for Debian's `/nonexistent`); a variable naming a policy folder that does not
    /// exist is no folder to search, as when it is UTF-8.
    @Test func aMissingHomeThatIsNotUTF8FailsOnlyWhatNeedsAFolder() async throws {
        let environment = ["HOME": "DIR/h<FF>", "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": "", "IMGPOLICY_POLICY_DIR": "DIR/p<FF>"]
        let version = try await run(["--version"], environment: environment)
        #expect(version.status == 0 && !version.stdout.isEmpty, "\(version.stderr)")
        let help = try await run(["--help"], environment: environment)
        #expect(help.status == 0 && help.stdout.contains("USAGE: imgpolicy"), "\(help.stderr)")
        let decision = try await run(["--network", "wifi", "--item", "examples/item.json", "--policy", "low-data"], environment: environment)
        #expect(decision.status == 0 && decision.stdout.hasPrefix("sunset: load original"), "\(decision.stderr)")
        let check = try await run(["policy", "check", "default"], environment: environment)
        #expect(check.status == 0, "\(check.stderr)")
        let stats = try await run(["cache", "stats"], environment: environment)
        #expect(stats.status == 74 && stats.stderr.hasPrefix("imgpolicy: no default cache location: HOME"), "\(stats.stderr)")
        let set = try await run(["settings", "set", "a", "true"], environment: environment)
        #expect(set.status == 74 && set.stderr.contains("no default settings location"), "\(set.stderr)")
        #expect(list().isEmpty)
    }

    /// A cache folder named with 0xFF is the cache (created in it, never under a repaired name),
    /// and `stats` reads its ledger; so is one under a path variable that is not UTF-8.
    @Test func aCacheFolderWithAByteThatIsNotUTF8IsUsedAsGiven() async throws {
        #expect(Self.withPath(path("c<FF>")) { mkdir($0, 0o755) } == 0)
        // `cache clear` writes (the marker); `cache stats` and `stats` only read.
        let clear = try await run(["cache", "clear", "--cache-dir", "DIR/c<FF>"])
        #expect(clear.status == 0 && clear.stdout == "removed 0 entries from \(folder.path)/c\\xFF\n", "\(clear.stderr)")
        let stats = try await run(["cache", "stats", "--cache-dir", "DIR/c<FF>"])
        #expect(stats.status == 0 && stats.stdout.hasPrefix("folder: \(folder.path)/c\\xFF\n"), "\(stats.stderr)")
        #expect(list() == ["c\\xFF"])
        #expect(list("c<FF>").contains(".imgpolicy-cache"))
        let usage = try await run(["stats", "--cache-dir", "DIR/c<FF>"])
        #expect(usage.status == 0 && usage.stdout.contains("nothing recorded"), "\(usage.stderr)")
        let fresh = try await run(["cache", "clear", "--cache-dir", "DIR/c<FF>/new"])
        #expect(fresh.status == 0 && list("c<FF>").contains("new"), "\(fresh.stderr)")
        // The default folder under $XDG_CACHE_HOME that is not UTF-8.
        #expect(Self.withPath(path("x<FF>")) { mkdir($0, 0o755) } == 0)
        let fromVariable = try await run(["cache", "clear"], environment: ["XDG_CACHE_HOME": "DIR/x<FF>"])
        #expect(fromVariable.status == 0 && fromVariable.stdout == "removed 0 entries from \(folder.path)/x\\xFF/imgpolicy\n", "\(fromVariable.stderr)")
        #expect(list("x<FF>") == ["imgpolicy"])
        let statsFromVariable = try await run(["cache", "stats"], environment: ["XDG_CACHE_HOME": "DIR/x<FF>"])
        #expect(statsFromVariable.status == 0 && statsFromVariable.stdout.hasPrefix("folder: \(folder.path)/x\\xFF/imgpolicy\n"))
        let missingVariable = try await run(["cache", "stats"], environment: ["XDG_CACHE_HOME": "DIR/y<FF>"])
        #expect(missingVariable.status == 64 && missingVariable.stderr.contains("XDG_CACHE_HOME=\"\(folder.path)/y\\xFF\""))
        #expect(list() == ["c\\xFF", "x\\xFF"])
    }

    /// Files written: a settings file or an image in a folder named with 0xFF is written there; a
    /// file whose own name is not UTF-8 is never replaced (its name cannot be written), exit 74,
    /// the file unchanged; nothing is created under a repaired name.
    @Test func writtenFilesGoWhereTheyWereNamedOrAreRefused() async throws {
        let server = try TestHTTPServer(routes: ["/o.png": .ok(TestImages.png(size: 2_000, seed: 1))])
        write(#"{"id": "x", "original": "\#(server.url("/o.png"))"}"#, to: "item.json")
        #expect(Self.withPath(path("d<FF>")) { mkdir($0, 0o755) } == 0)
        let set = try await run(["settings", "set", "alwaysDownloadOriginalImage", "true", "--settings", "DIR/d<FF>/s.json"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(read("d<FF>/s.json")?.contains(#""alwaysDownloadOriginalImage": true"#) == true)
        write(#"{"alwaysDownloadOriginalImage": false}"#, to: "s<FF>.json")
        let refused = try await run(["settings", "set", "alwaysDownloadOriginalImage", "true", "--settings", "DIR/s<FF>.json"])
        #expect(refused.status == 74)
        #expect(refused.stderr == "imgpolicy: \(folder.path)/s\\xFF.json: cannot write the settings: its name is not UTF-8; imgpolicy reads such a file but never replaces it (rename it)\n")
        #expect(read("s<FF>.json") == #"{"alwaysDownloadOriginalImage": false}"#)
        let fetched = try await run(["--network", "wifi", "--item", "DIR/item.json", "--fetch", "--cache-dir", "DIR/d<FF>/cache",
                                     "--output", "DIR/d<FF>/image.png"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(read("d<FF>/image.png")?.utf8.count ?? 0 > 0 || list("d<FF>").contains("image.png"))
        write("old", to: "o<FF>.png")
        let notReplaced = try await run(["--network", "wifi", "--item", "DIR/item.json", "--fetch", "--cache-dir", "DIR/d<FF>/cache",
                                         "--output", "DIR/o<FF>.png"])
        #expect(notReplaced.status == 74)
        #expect(notReplaced.stderr.hasPrefix("imgpolicy: \(folder.path)/o\\xFF.png: cannot write the image: its name is not UTF-8"))
        #expect(read("o<FF>.png") == "old")
        #expect(server.hits("/o.png") == 1, "refused before a second download")
        // A link with a UTF-8 name to that file: the link's real path is not UTF-8, never replaced.
        #expect(Self.withPath(path("o<FF>.png")) { target in Self.withPath(path("link.png")) { symlink(target, $0) } } == 0)
        let throughLink = try await run(["--network", "wifi", "--item", "DIR/item.json", "--fetch", "--cache-dir", "DIR/d<FF>/cache",
                                         "--output", "DIR/link.png"])
        #expect(throughLink.status == 74)
        #expect(throughLink.stderr.hasPrefix("imgpolicy: \(folder.path)/link.png: cannot write the image: its real path /"), "\(throughLink.stderr)")
        #expect(throughLink.stderr.hasSuffix("/o\\xFF.png is not UTF-8; only a file whose path is UTF-8 is replaced (rename it)\n"))
        #expect(read("o<FF>.png") == "old")
        #expect(list().allSatisfy { !$0.contains("\u{FFFD}") })
        #expect(list() == ["d\\xFF", "item.json", "link.png", "o\\xFF.png", "s\\xFF.json"])
    }

    /// A setting's key or value that is not UTF-8 is refused, even when a file of that name
    /// exists in the current folder: only paths are made into `/proc/self/fd` paths (else the
    /// settings file got `"/proc/self/fd/3": true`).
    @Test func aKeyOrValueThatIsNotUTF8IsRefusedNotStoredAsADescriptorPath() async throws {
        write("", to: "key<FF>")
        write("", to: "v<FF>")
        let settings = folder.file("settings.json")
        for arguments in [["settings", "set", "DIR/key<FF>", "true"], ["settings", "set", "k", "DIR/v<FF>"],
                          ["--network", "wifi", "--item", "DIR/v<FF>", "--set", "DIR/key<FF>=true"]] {
            let result = try await run(arguments + ["--settings", settings])
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("is not UTF-8: only a path"), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: settings), "\(arguments) wrote the settings file")
        }
    }
}
