import Policy
import Support

/// The CDN mode's part of the report: the pixels each row showed against its display width, and
/// the bytes against the ideal and the two naive schemes (docs/ladders.md).
extension SimulationReport {
    /// What the CDN mode measured and compares.
    package struct LadderFigures {
        /// The display width every row has, in pixels.
        var display: Int
        /// Times a row was on screen and showed an image; of them, at least the display width,
        /// and narrower.
        var episodes: Int
        var covering: Int
        var narrower: Int
        /// Times a row was on screen and left (or the run ended) without an image.
        var withoutImage: Int
        /// Of them, rows still on screen at the end without an image.
        var endedWithoutImage: Int
        /// Σ shown width² against Σ display width², over the episodes with an image (the images
        /// are 4:3, so this is the ratio of pixels shown to pixels the rows need).
        var pixelRatio: Double
        /// Distinct rows that showed an image.
        var rows: Int
        /// Bytes the SDK pass downloaded.
        var downloaded: Int
        /// Each such row's narrowest rung at least the display width, once: the least any
        /// scheme showing them all sharp can download.
        var ideal: Int
        /// Each such row's 12 MP original (the widest rung), once: the original-only scheme.
        var originalOnly: Int
        /// Each such row's narrowest rung (160 px), once: today's thumbnail scheme on cellular.
        var thumbnails: Int
        /// The naive pass (every visible row loads its original, nothing shared or cancelled),
        /// measured.
        var naiveDownloaded: Int
    }

    /// The CDN mode's figures; nil for a run of generated originals and thumbnails.
    package var ladderFigures: LadderFigures? {
        guard let photos = setup.photos else { return nil }
        let display = setup.displayWidth ?? photos.widths[photos.widths.count - 1]
        let shown = sdk.screen.shownWidths.filter { $0 > 0 }
        let needed = Double(display) * Double(display) * Double(shown.count)
        let pixels = shown.reduce(0.0) { $0 + Double($1) * Double($1) }
        let rows = sdk.screen.rowsWithImage
        let covering = photos.coveringWidth(display), widest = photos.widths[photos.widths.count - 1], narrowest = photos.widths[0]
        return LadderFigures(
            display: display, episodes: shown.count, covering: shown.filter { $0 >= display }.count,
            narrower: shown.filter { $0 < display }.count,
            withoutImage: sdk.screen.shownWidths.count - shown.count, endedWithoutImage: sdk.screen.endedWithoutImage,
            pixelRatio: needed > 0 ? pixels / needed : 0, rows: rows.count, downloaded: sdk.server.totalBytes,
            ideal: rows.reduce(0) { $0 + photos.size(row: $1, width: covering) },
            originalOnly: rows.reduce(0) { $0 + photos.size(row: $1, width: widest) },
            thumbnails: rows.reduce(0) { $0 + photos.size(row: $1, width: narrowest) },
            naiveDownloaded: baseline.server.totalBytes)
    }

    /// The CDN mode's goals: every row at its display width at least, for at most 1.2 × the
    /// ideal bytes.
    var ladderGoals: [Goal] {
        guard let figures = ladderFigures else { return [] }
        return [
            // Rows passed over during a fling leave without an image by design (nothing starts
            // then); a row still on screen at the end without one is a failure.
            Goal(name: "every row shown at ≥ its display width (\(figures.display) px), none left on screen without an image",
                 met: figures.episodes + figures.endedWithoutImage > 0 ? figures.narrower == 0 && figures.endedWithoutImage == 0 : nil,
                 detail: "\(figures.covering) of \(figures.episodes) rows with an image, \(figures.narrower) narrower, "
                    + "\(figures.endedWithoutImage) on screen at the end without one; pixels shown \(Self.ratio(figures.pixelRatio, 1)) × those needed"),
            // Bytes with no row shown are bytes for nothing: not met.
            Goal(name: "bytes ≤ 1.2 × the ideal (each shown row's narrowest covering rung, once)",
                 met: figures.ideal > 0 ? Double(figures.downloaded) <= 1.2 * Double(figures.ideal) : figures.downloaded == 0 ? nil : false,
                 detail: "\(figures.downloaded) against \(figures.ideal) bytes: \(Self.ratio(Double(figures.downloaded), Double(figures.ideal))) ×"),
        ]
    }

    /// The CDN mode's lines of the text report.
    var ladderLines: [String] {
        guard let figures = ladderFigures, let photos = setup.photos else { return [] }
        func share(_ bytes: Int) -> String { "\(bytes) bytes (\(Self.ratio(Double(bytes), Double(max(1, figures.ideal)))) × the ideal)" }
        return [
            "",
            "CDN mode: \(photos.names.count) photos at \(photos.widths.count) widths (\(photos.widths[0])–\(photos.widths[photos.widths.count - 1]) px), display \(figures.display) px:",
            "  rows with an image \(figures.episodes) (\(figures.rows) distinct): \(figures.covering) at ≥ \(figures.display) px, \(figures.narrower) narrower; \(figures.withoutImage) left or ended without one",
            "  pixels shown \(Self.ratio(figures.pixelRatio, 1)) × the pixels the rows need",
            "  downloaded \(share(figures.downloaded)), \(figures.rows > 0 ? figures.downloaded / figures.rows : 0) bytes per row shown",
            "  ideal (each row's narrowest covering rung, \(photos.coveringWidth(figures.display)) px, once) \(figures.ideal) bytes",
            "  original only (each row's \(photos.widths[photos.widths.count - 1]) px original once) \(share(figures.originalOnly)); the naive pass downloaded \(figures.naiveDownloaded)",
            "  today's thumbnails (each row's \(photos.widths[0]) px rung once) \(share(figures.thumbnails)): \(Self.ratio(Double(figures.downloaded), Double(max(1, figures.thumbnails)))) × their bytes for \(Self.ratio(Double(figures.display * figures.display), Double(photos.widths[0] * photos.widths[0]))) × their pixels",
        ]
    }

    /// The CDN mode's JSON member, or nil.
    var ladderJSON: JSONValue? {
        guard let figures = ladderFigures else { return nil }
        func int(_ value: Int) -> JSONValue { JSONValue(.number(String(value))) }
        return JSONValue(.object([
            ("displayWidth", int(figures.display)), ("rowsWithImage", int(figures.episodes)), ("distinctRows", int(figures.rows)),
            ("atDisplayWidth", int(figures.covering)), ("narrower", int(figures.narrower)), ("withoutImage", int(figures.withoutImage)),
            ("endedWithoutImage", int(figures.endedWithoutImage)),
            ("pixelsShownOverNeeded", JSONValue(.number(Self.ratio(figures.pixelRatio, 1)))),
            ("bytes", JSONValue(.object([("downloaded", int(figures.downloaded)), ("ideal", int(figures.ideal)),
                                         ("originalOnly", int(figures.originalOnly)), ("thumbnails", int(figures.thumbnails)),
                                         ("naiveDownloaded", int(figures.naiveDownloaded))]))),
        ]))
    }
}
