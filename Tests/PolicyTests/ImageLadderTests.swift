import Foundation
import Policy
import Testing
import TestSupport

/// Issue 18, items: ladders (a `srcset`'s rungs) and CDN templates in item files, validated as
/// strictly as URLs: every problem is one `DataFileError` naming the file, the line and the key.
struct ImageLadderTests {
    func items(_ json: String) throws(DataFileError) -> [ImageItem] {
        try ImageItem.items(fromJSON: Array(json.utf8), source: "l.json")
    }

    func problem(_ json: String) -> String {
        do {
            _ = try items(json)
            return "no error"
        } catch {
            #expect(error.code == .invalid, "\(error)")
            return error.description
        }
    }

    @Test func aLadderGivesTheOriginalAndThumbnailAndItsRungsNarrowestFirst() throws {
        let item = try #require(try items("""
            {"id": "p", "ladder": [{"url": "https://c.example/p-800.jpg", "width": 800, "bytes": 90000},
                                   {"url": "https://c.example/p-200.jpg", "width": 200},
                                   {"url": "https://c.example/p-400.jpg", "width": 400}]}
            """).first)
        let ladder = try #require(item.ladder)
        #expect(ladder.rungs.map(\.width) == [200, 400, 800])
        #expect(ladder.widest.bytes == 90000 && ladder.narrowest.bytes == nil)
        #expect(item.original.absoluteString == "https://c.example/p-800.jpg" && item.originalWidth == 800)
        #expect(item.thumbnail?.absoluteString == "https://c.example/p-200.jpg" && item.thumbnailWidth == 200)
        #expect(ladder.rung(covering: 300).width == 400 && ladder.rung(covering: 400).width == 400)
        #expect(ladder.rung(covering: 2000).width == 800 && ladder.smallestRung(covering: 2000) == nil)
        #expect(ladder.rung(covering: 1).width == 200)
    }

    @Test func aTemplateMakesOneRungPerWidth() throws {
        let item = try #require(try items("""
            {"template": {"url": "https://cdn.example/p/42.jpg?w={width}&q=80", "widths": [1280, 160, 640]}}
            """).first)
        let ladder = try #require(item.ladder)
        #expect(ladder.rungs.map(\.url.absoluteString) == ["https://cdn.example/p/42.jpg?w=160&q=80",
                                                          "https://cdn.example/p/42.jpg?w=640&q=80",
                                                          "https://cdn.example/p/42.jpg?w=1280&q=80"])
        #expect(ladder.template == "https://cdn.example/p/42.jpg?w={width}&q=80")
        #expect(item.original.absoluteString.hasSuffix("w=1280&q=80") && item.thumbnailWidth == 160)
        // One width: an original and no thumbnail.
        let single = try #require(try items(#"{"template": {"url": "https://c.example/{width}.jpg", "widths": [500]}}"#).first)
        #expect(single.thumbnail == nil && single.originalWidth == 500)
    }

    @Test func anItemWithOriginalAndALadderKeepsItsOriginal() throws {
        let item = try #require(try items("""
            {"original": "https://c.example/o.jpg", "thumbnail": "https://c.example/t.jpg", "thumbnailWidth": 160,
             "template": {"url": "https://c.example/o.jpg?w={width}", "widths": [400, 800]}}
            """).first)
        #expect(item.original.absoluteString == "https://c.example/o.jpg" && item.thumbnailWidth == 160)
        #expect(item.ladder?.rungs.count == 2)
    }

    @Test(arguments: [
        (#"{"ladder": []}"#, #"l.json: line 1: "ladder": a ladder needs at least one rung"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": 0}]}"#,
         #"l.json: line 1: "ladder" rung 1: "width" must be a whole number of pixels from 1 to 1000000, found 0"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": -4}]}"#,
         #"l.json: line 1: "ladder" rung 1: "width" must be a whole number of pixels from 1 to 1000000, found -4"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": 2.5}]}"#,
         #"l.json: line 1: "ladder" rung 1: "width" must be a whole number of pixels from 1 to 1000000, found 2.5"#),
        ("{\"ladder\": [{\"url\": \"https://c.example/a.jpg\", \"width\": 400},\n {\"url\": \"https://c.example/b.jpg\", \"width\": 400}]}",
         #"l.json: line 1: "ladder": two rungs are 400 pixels wide; widths must be distinct"#),
        ("{\"ladder\": [\n{\"url\": \"file:///etc/passwd\", \"width\": 400}]}",
         #"l.json: line 2: "ladder" rung 1: "url": scheme "file" is not allowed (only http and https)"#),
        (#"{"ladder": [{"width": 400}]}"#, #"l.json: line 1: "ladder" rung 1: "url" is missing"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg"}]}"#, #"l.json: line 1: "ladder" rung 1: "width" is missing"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": 4, "bytes": 0}]}"#,
         #"l.json: line 1: "ladder" rung 1: "bytes" must be a whole number of bytes from 1 up, found 0"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": 4, "wdith": 5}]}"#,
         #"l.json: line 1: "ladder" rung 1: unknown key "wdith" (expected "url", "width", "bytes")"#),
        (#"{"ladder": {"url": "https://c.example/a.jpg"}}"#, #"l.json: line 1: "ladder" must be an array, found an object"#),
        (#"{"template": {"url": "https://c.example/a.jpg", "widths": [400]}}"#,
         #"l.json: line 1: "template": the template holds no {width} placeholder"#),
        (#"{"template": {"url": "https://c.example/{width}/a.jpg?w={width}", "widths": [400]}}"#,
         #"l.json: line 1: "template": the template holds {width} 2 times; it must hold it once"#),
        (#"{"template": {"url": "https://c.example:{width}/a.jpg", "widths": [99999]}}"#,
         #"l.json: line 1: "template": the template makes an invalid URL for width 99999: the port "99999" is not a number from 1 to 65535"#),
        (#"{"template": {"url": "https://c.example/{width}.jpg", "widths": []}}"#,
         #"l.json: line 1: "template": a ladder needs at least one rung"#),
        (#"{"template": {"url": "https://c.example/{width}.jpg"}}"#, #"l.json: line 1: "template": "widths" is missing"#),
        (#"{"template": {"url": "https://c.example/{width}.jpg", "widths": ["400"]}}"#,
         #"l.json: line 1: "template": "widths" must be a number of pixels, found a string"#),
        (#"{"template": {"url": "https://c.example/{width}.jpg", "widths": [400]}, "ladder": []}"#,
         #"l.json: line 1: give either "ladder" or "template", not both"#),
        (#"{"template": {"url": "https://c.example/{width}.jpg", "widths": [400]}, "thumbnail": "https://c.example/t.jpg"}"#,
         #"l.json: line 1: "thumbnail" is given without "original": an item with a ladder and no "original" takes its widest rung as the original and its narrowest as the thumbnail"#),
        (#"{"id": "x"}"#, #"l.json: line 1: "original" is missing (or a "ladder" or "template" to make it from)"#),
        // From the probe: one URL for two widths (the placeholder in the fragment, which is dropped,
        // or a URL written twice) would serve the wide image as the narrow rung.
        (#"{"template": {"url": "http://127.0.0.1:9/p.png#w={width}", "widths": [100, 800]}}"#,
         #"l.json: line 1: "template": the {width} placeholder is in the fragment (after #), which is never sent to the server: every width would be one URL"#),
        (#"{"ladder": [{"url": "https://c.example/a.jpg", "width": 200}, {"url": "https://c.example/a.jpg#big", "width": 800}]}"#,
         #"l.json: line 1: "ladder": the rungs of 200 and 800 pixels have one URL (https://c.example/a.jpg); each width needs its own"#),
        // The placeholder is found in the bytes: a combining mark after it does not hide it.
        ("{\"template\": {\"url\": \"https://a.example/{width}\u{0301}/{width}.jpg\", \"widths\": [200]}}",
         #"l.json: line 1: "template": the template holds {width} 2 times; it must hold it once"#),
        (#"[{"original": "https://c.example/o.jpg"}, {"ladder": [{"url": "https://c.example/a.jpg", "width": 0}]}]"#,
         #"l.json: line 1: item 2, "ladder" rung 1: "width" must be a whole number of pixels from 1 to 1000000, found 0"#),
    ])
    func hostileLaddersAreOneLineNamingTheKey(_ json: String, _ message: String) {
        #expect(problem(json) == message)
    }

    /// A placeholder followed by a combining mark is still one placeholder; a null thumbnail
    /// beside a ladder means none, as null does everywhere else.
    @Test func aPlaceholderBeforeACombiningMarkAndANullThumbnail() throws {
        let item = try #require(try items("{\"template\": {\"url\": \"https://a.example/x.jpg?w={width}\u{0301}\", \"widths\": [200, 400]}, \"thumbnail\": null}").first)
        #expect(item.ladder?.rungs.map(\.url.absoluteString) == ["https://a.example/x.jpg?w=200\u{0301}", "https://a.example/x.jpg?w=400\u{0301}"])
        #expect(item.ladder?.rungs.count == 2 && item.thumbnailWidth == 200)
    }

    @Test func tooManyRungsOrWidthsAreRefused() {
        let rungs = (1...33).map { #"{"url": "https://c.example/\#($0).jpg", "width": \#($0)}"# }.joined(separator: ",")
        #expect(problem(#"{"ladder": [\#(rungs)]}"#) == #"l.json: line 1: "ladder": 33 rungs, more than the limit of 32"#)
        let widths = (1...33).map(String.init).joined(separator: ",")
        #expect(problem(#"{"template": {"url": "https://c.example/{width}.jpg", "widths": [\#(widths)]}}"#)
                == #"l.json: line 1: "template": "widths": 33 widths, more than the limit of 32"#)
    }

    /// Random ladders, valid and not, against an independent statement of the rules: a valid one
    /// parses to its rungs sorted by width, and the covering rung is the narrowest ≥ the display
    /// (else the widest); an invalid one is one `.invalid` error. Seeded; the seed is printed.
    @Test func randomLaddersFollowTheRules() throws {
        var random = SeededGenerator(seed: 0x1AD_DE25, label: "randomLaddersFollowTheRules")
        for _ in 0..<400 {
            let count = Int.random(in: 0...34, using: &random)
            let widths = (0..<count).map { _ in
                Int.random(in: 0...9, using: &random) == 0 ? Int.random(in: -5...0, using: &random) : Int.random(in: 1...3000, using: &random)
            }
            let json = #"{"template": {"url": "https://c.example/p.jpg?w={width}", "widths": [\#(widths.map(String.init).joined(separator: ","))]}}"#
            let valid = (1...32).contains(count) && widths.allSatisfy { $0 >= 1 } && Set(widths).count == widths.count
            if valid {
                let ladder = try #require(try items(json).first?.ladder, "\(json)")
                #expect(ladder.rungs.map(\.width) == widths.sorted(), "\(json)")
                let display = Int.random(in: 1...3200, using: &random)
                let expected = widths.sorted().first { $0 >= display } ?? widths.max()!
                #expect(ladder.rung(covering: display).width == expected, "\(json) at \(display)")
                #expect(ladder.rung(covering: display).url.absoluteString == "https://c.example/p.jpg?w=\(expected)")
            } else {
                #expect(problem(json) != "no error", "\(json)")
            }
        }
    }
}
