import Foundation
import Testing
import TestSupport

/// Issue 18: `imgpolicy simulate --photos DIR --display-width N`, the CDN mode, as a process: the
/// server serves every width of a photo folder (here a small one the test writes, each width a
/// different body), each row is a template item, and the report checks each image against the
/// server's own bytes and gives the widths shown and the bytes against the ideal.
struct SimulateLadderTests {
    let cli = CLIRunner()
    static let widths = [160, 320, 480, 640, 1280, 4000]

    /// A real PNG `width` pixels wide (4:3), padded by a private chunk to a size that grows with
    /// the width's square, different for each photo.
    static func image(width: Int, photo: Int) -> [UInt8] {
        let png = LargeImages.greyPNG(width: width, height: width * 3 / 4)
        let padding = TestImages.pattern(count: 200 + width * width / 100, seed: photo * 10_000 + width)
        return Array(png.dropLast(12)) + PNGChunks.chunk("imPd", padding) + Array(png.suffix(12))
    }

    /// A photo folder as scripts/cdn-photos.sh lays it out: two photos, every width a real PNG of
    /// that width.
    func photoFolder() throws -> String {
        let folder = cli.home.file("photos")
        var photos: [String] = []
        for (photo, name) in ["alpha", "beta"].enumerated() {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
            for width in Self.widths {
                let bytes = Self.image(width: width, photo: photo)
                try Data(bytes).write(to: URL(fileURLWithPath: "\(folder)/\(name)/\(width).jpg"))
            }
            photos.append(#"{"name": "\#(name)"}"#)
        }
        let widths = Self.widths.map(String.init).joined(separator: ", ")
        try Data(#"{"widths": [\#(widths)], "photos": [\#(photos.joined(separator: ", "))]}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/manifest.json"))
        return folder
    }

    func run(_ script: String, photos: String) async throws -> [String: Any] {
        let result = try await cli.run(["simulate", "--items", "60", "--visible", "6", "--rows-per-second", "40", "--latency", "5-25",
                                        "--network-script", script, "--policy", "fit-display", "--photos", photos,
                                        "--display-width", "400", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
    }

    @Test(arguments: ["wifi@0s", "cellular@0s", "cellular@0s,wifi@1s"])
    func everyRowShowsItsDisplayWidthForAboutTheIdealBytes(script: String) async throws {
        let report = try await run(script, photos: try photoFolder())
        #expect(report["wrongSlotDeliveries"] as? Int == 0 && report["staleDeliveries"] as? Int == 0 && report["duplicateTransfers"] as? Int == 0,
                "\(report["problems"] ?? "")")
        let ladders = try #require(report["ladders"] as? [String: Any])
        let rows = try #require(ladders["rowsWithImage"] as? Int)
        #expect(rows > 0)
        #expect(ladders["narrower"] as? Int == 0 && ladders["atDisplayWidth"] as? Int == rows, "\(ladders)")
        #expect(ladders["endedWithoutImage"] as? Int == 0, "\(ladders)")
        let bytes = try #require(ladders["bytes"] as? [String: Int])
        let downloaded = try #require(bytes["downloaded"]), ideal = try #require(bytes["ideal"])
        #expect(ideal > 0 && Double(downloaded) <= 1.2 * Double(ideal), "\(bytes)")
        #expect(try #require(bytes["originalOnly"]) > 10 * ideal, "the 4000 rung is far larger than the 480 one")
        #expect(try #require(bytes["naiveDownloaded"]) > downloaded)
        let goals = try #require(report["goals"] as? [[String: Any]])
        let ladderGoals = goals.filter { (($0["name"] as? String) ?? "").contains("display width") || (($0["name"] as? String) ?? "").contains("ideal") }
        #expect(ladderGoals.count == 2, "\(goals)")
        for goal in ladderGoals { #expect(goal["met"] as? Bool == true, "\(goal)") }
    }

    @Test func aMissingOrDamagedPhotoFolderIsOneLine() async throws {
        let missing = try await cli.run(["simulate", "--items", "10", "--display-width", "400", "--photos", cli.home.file("nowhere")])
        #expect(missing.status == 66 && missing.stderr.hasPrefix("imgpolicy: ") && missing.stderr.contains("nowhere/manifest.json"), "\(missing.stderr)")
        #expect(missing.stderr.split(separator: "\n").count == 1)
        let folder = try photoFolder()
        try FileManager.default.removeItem(atPath: folder + "/beta/640.jpg")
        let gap = try await cli.run(["simulate", "--items", "10", "--display-width", "400", "--photos", folder])
        #expect(gap.status == 66 && gap.stderr.contains("beta/640.jpg"), "\(gap.stderr)")
        // A file that is another width's image, or no image: refused, never measured.
        try Data(Self.image(width: 160, photo: 1)).write(to: URL(fileURLWithPath: folder + "/beta/640.jpg"))
        let wrong = try await cli.run(["simulate", "--items", "10", "--display-width", "400", "--photos", folder])
        #expect(wrong.status == 65 && wrong.stderr.contains("beta/640.jpg: is 160 pixels wide, not 640"), "\(wrong.stderr)")
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: folder + "/beta/640.jpg"))
        let text = try await cli.run(["simulate", "--items", "10", "--display-width", "400", "--photos", folder])
        #expect(text.status == 65 && text.stderr.contains("is not a JPEG or PNG image"), "\(text.stderr)")
        let noWidth = try await cli.run(["simulate", "--items", "10", "--photos", folder])
        #expect(noWidth.status == 64 && noWidth.stderr.contains("--photos needs --display-width"), "\(noWidth.stderr)")
        try Data(#"{"widths": [160, 160], "photos": [{"name": "alpha"}]}"#.utf8).write(to: URL(fileURLWithPath: folder + "/manifest.json"))
        let twice = try await cli.run(["simulate", "--items", "10", "--display-width", "400", "--photos", folder])
        #expect(twice.status == 65 && twice.stderr.contains("distinct"), "\(twice.stderr)")
        let width = try await cli.run(["simulate", "--items", "10", "--display-width", "0"])
        #expect(width.status == 64 && width.stderr.contains("--display-width 0"), "\(width.stderr)")
    }
}
