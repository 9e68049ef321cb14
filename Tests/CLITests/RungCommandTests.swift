import Foundation
import Testing
import TestSupport

/// Issue 18: `imgpolicy` chooses a rung of a template item by `--size` and the network with the
/// `fit-display` policy, `--json` names it, `--fetch` downloads exactly that rung (the server's own
/// bytes), and later runs show the cached rung instead of downloading another.
struct RungCommandTests {
    let cli = CLIRunner()
    let server: TestHTTPServer
    static let widths = [160, 320, 640, 1280, 2560]

    init() throws {
        var routes: [String: TestHTTPServer.Response] = [:]
        for (index, width) in Self.widths.enumerated() { routes["/p/\(width).png"] = .ok(Self.bytes(width, index)) }
        server = try TestHTTPServer(routes: routes)
    }

    /// Each width's body: a real PNG of that width (4:3), different for each.
    static func bytes(_ width: Int, _ index: Int) -> [UInt8] { LargeImages.greyPNG(width: width, height: width * 3 / 4) }

    func itemFile() throws -> String {
        let widths = Self.widths.map(String.init).joined(separator: ", ")
        return try cli.home.write(#"{"id": "p", "template": {"url": "\#(server.url("/p/{width}.png"))", "widths": [\#(widths)]}}"#,
                                  to: "p.json")
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func theDisplayWidthChoosesTheRungAndJSONNamesIt() async throws {
        let item = try itemFile()
        let cellular = try await cli.run(["--network", "cellular", "--item", item, "--policy", "fit-display", "--size", "400x300", "--json"])
        #expect(cellular.status == 0, "\(cellular.stderr)")
        let decision = try json(cellular.stdout)
        #expect(decision["url"] as? String == server.url("/p/640.png"))
        #expect(decision["variant"] as? String == "thumbnail" && decision["rule"] as? String == "cellular-covering-capped")
        #expect((decision["rung"] as? [String: Any])?["width"] as? Int == 640)
        let wide = try await cli.run(["--network", "cellular", "--item", item, "--policy", "fit-display", "--size", "2000x1500"])
        #expect(wide.stdout.hasPrefix("p: load thumbnail (1280 px) \(server.url("/p/1280.png"))"), "\(wide.stdout)")
        let wifi = try await cli.run(["--network", "wifi", "--item", item, "--policy", "fit-display", "--size", "2000x1500"])
        #expect(wifi.stdout.hasPrefix("p: load original (2560 px) \(server.url("/p/2560.png"))"), "\(wifi.stdout)")
        let roaming = try await cli.run(["--network", "cellular", "--roaming", "--item", item, "--policy", "fit-display", "--size", "400x300"])
        #expect(roaming.stdout.hasPrefix("p: load thumbnail (160 px) "), "\(roaming.stdout)")
        // --size without --fetch is the display of every item of a list.
        let list = try cli.home.write("[" + (try String(contentsOfFile: item, encoding: .utf8)) + ", "
                                      + (try String(contentsOfFile: item, encoding: .utf8)).replacingOccurrences(of: #""p""#, with: #""q""#) + "]",
                                      to: "list.json")
        let both = try await cli.run(["--network", "cellular", "--item", list, "--policy", "fit-display", "--size", "300x200"])
        #expect(both.status == 0 && both.stdout.split(separator: "\n").count == 2 && !both.stdout.contains("640"), "\(both.stdout) \(both.stderr)")
        #expect(server.totalHits == 0, "deciding downloads nothing")
    }

    /// `policy show --json` and `policy table --json` write a rung rule's rung as the policy file
    /// does, and no variant (it depends on the rung chosen for an item).
    @Test func policyShowAndTableWriteRungsAsTheFileDoes() async throws {
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: PackagePaths.policies + "/fit-display.json"))) as? [String: Any])
        let fileRules = try #require(file["rules"] as? [[String: Any]])
        let shown = try json(try await cli.run(["policy", "show", "fit-display", "--json"]).stdout)
        let shownRules = try #require(shown["rules"] as? [[String: Any]])
        #expect(shownRules.count == fileRules.count)
        for (written, read) in zip(fileRules, shownRules) {
            let expected = written["rung"].map { JSONValueText($0) } ?? "null"
            #expect(JSONValueText(read["rung"] ?? NSNull()) == expected, "\(written["name"] ?? "")")
            if written["rung"] != nil { #expect(read["variant"] is NSNull, "\(read)") }
        }
        let table = try await cli.run(["policy", "table", "fit-display", "--json"])
        let rows = try table.stdout.split(separator: "\n").map { try json(String($0)) }
        #expect(rows.contains { ($0["rung"] as? [String: Any])?["maxWidth"] as? Int == 1280 })
        #expect(rows.allSatisfy { $0["rung"] == nil || $0["variant"] is NSNull })
    }

    /// A JSON value's compact text with sorted keys, to compare a file's value with the command's.
    func JSONValueText(_ value: Any) -> String {
        if value is NSNull { return "null" }
        if let text = value as? String { return "\"\(text)\"" }
        guard JSONSerialization.isValidJSONObject(value),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func fetchDownloadsOnlyTheChosenRungAndLaterRunsShowIt() async throws {
        let item = try itemFile(), cache = cli.home.file("cache"), output = cli.home.file("out.png")
        let fetched = try await cli.run(["--network", "cellular", "--item", item, "--policy", "fit-display", "--size", "400x300",
                                         "--fetch", "--cache-dir", cache, "--output", output])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(server.hits("/p/640.png") == 1 && server.totalHits == 1, "only the 640 rung is downloaded")
        // --output writes the decoded image at the display size; the cached bytes are the server's own.
        #expect(FileManager.default.fileExists(atPath: output))
        // Offline with a wider row: the widest cached rung. Wi-Fi with a narrower row: the cached
        // 640 covers it, so nothing is downloaded.
        let offline = try await cli.run(["--network", "offline", "--item", item, "--policy", "fit-display", "--size", "800x600",
                                         "--cache-dir", cache])
        #expect(offline.stdout.hasPrefix("p: show-cached thumbnail (640 px) "), "\(offline.stdout)")
        #expect(offline.stdout.contains("offline-widest-cached"))
        let wifi = try await cli.run(["--network", "wifi", "--item", item, "--policy", "fit-display", "--size", "300x200",
                                      "--fetch", "--cache-dir", cache, "--json"])
        #expect(wifi.status == 0, "\(wifi.stderr)")
        #expect(wifi.stdout.contains(#""rule":"cached-covering""#) && wifi.stdout.contains("/p/640.png"), "\(wifi.stdout)")
        #expect(server.totalHits == 1, "a cached rung that covers is never downloaded again")
        // The ledger counts the download by its width.
        let stats = try await cli.run(["stats", "--cache-dir", cache, "--json"])
        let usage = try json(stats.stdout)
        let total = try #require(usage["total"] as? [String: Any] ?? usage, "\(stats.stdout)")
        let byWidth = ((total["bytes"] as? [String: Any])?["byWidth"] as? [String: Any]) ?? [:]
        #expect(byWidth.keys.sorted() == ["640"] && byWidth["640"] as? Int == Self.bytes(640, 2).count, "\(stats.stdout)")
        let text = try await cli.run(["stats", "--cache-dir", cache])
        #expect(text.stdout.contains("downloaded by width: 640 px "), "\(text.stdout)")
        // The one entry is the 640 rung, at the server's own size.
        let listed = try await cli.run(["cache", "list", "--cache-dir", cache])
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasSuffix(server.url("/p/640.png")) && lines[0].contains("\(Self.bytes(640, 2).count)"),
                "\(listed.stdout)")
    }
}
