import Testing
@testable import Policy
import TestSupport

/// Items' widths, the `thumbnailCoversDisplay` condition, and the bundled policy that uses it.
@Suite struct SizeAwareDecisionTests {
    static let prefix = #"{"id": "x", "original": "https://h.example/o.jpg", "thumbnail": "https://h.example/t.jpg""#

    @Test func itemsMaySayTheirWidths() throws {
        let items = try ImageItem.items(fromJSON: Array((Self.prefix + #", "originalWidth": 4000, "thumbnailWidth": 400}"#).utf8), source: "x.json")
        #expect(items.first?.originalWidth == 4000 && items.first?.thumbnailWidth == 400)
        let plain = try ImageItem.items(fromJSON: Array((Self.prefix + "}").utf8), source: "x.json")
        #expect(plain.first?.originalWidth == nil && plain.first?.thumbnailWidth == nil)
    }

    @Test(arguments: [
        (#", "thumbnailWidth": 0}"#, "\"thumbnailWidth\" must be a whole number of pixels from 1 to 1000000, found 0"),
        (#", "thumbnailWidth": -4}"#, "found -4"),
        (#", "originalWidth": 1.5}"#, "found 1.5"),
        (#", "originalWidth": 2000000}"#, "found 2000000"),
        (#", "originalWidth": 99999999999999999999999}"#, "found 99999999999999999999999"),
        (#", "originalWidth": "400"}"#, "\"originalWidth\" must be a number of pixels, found a string"),
    ])
    func badWidthsAreRejectedWithTheKey(_ args: (String, String)) {
        let (suffix, message) = args
        #expect {
            _ = try ImageItem.items(fromJSON: Array((Self.prefix + suffix).utf8), source: "x.json")
        } throws: { error in
            "\(error)".contains(message) && "\(error)".contains("x.json")
        }
    }

    @Test func aThumbnailWidthWithoutAThumbnailIsRejected() {
        let json = #"{"original": "https://h.example/o.jpg", "thumbnailWidth": 400}"#
        #expect { _ = try ImageItem.items(fromJSON: Array(json.utf8), source: "x.json") } throws: { error in
            "\(error)".contains("\"thumbnailWidth\" is given but the item has no \"thumbnail\"")
        }
    }

    @Test(arguments: [
        (400, 4000, 300, true), (400, 4000, 400, true), (400, 4000, 401, false),
        (400, 450, 1000, false), (400, 400, 1000, true),   // no wider than the original: the original adds nothing
        (400, nil, 300, true), (nil, 4000, 300, false),
    ] as [(Int?, Int?, Int, Bool)])
    func theThumbnailCoversTheDisplayWhenItIsAtLeastAsWide(_ args: (Int?, Int?, Int, Bool)) {
        let (thumbnail, original, display, covers) = args
        let item = ImageItem(original: ImageURL("https://h.example/o.jpg")!, thumbnail: ImageURL("https://h.example/t.jpg"),
                             originalWidth: original, thumbnailWidth: thumbnail)
        #expect(item.thumbnailCovers(displayWidth: display) == covers)
        #expect(!item.thumbnailCovers(displayWidth: nil))
        var noThumbnail = item
        noThumbnail.thumbnail = nil
        #expect(!noThumbnail.thumbnailCovers(displayWidth: display))
    }

    @Test func theBundledPolicyLoadsACoveringThumbnailOnWifi() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/thumbnail-when-enough.json")
        #expect(policy.failingCases().isEmpty)
        let item = ImageItem(original: ImageURL("https://h.example/o.jpg")!, thumbnail: ImageURL("https://h.example/t.jpg"),
                             originalWidth: 4000, thumbnailWidth: 400)
        let wifi = NetworkState(.wifi)
        #expect(policy.decide(item, network: wifi, settings: policy.defaultSettings, cached: [], displayWidth: 320).action
                == .load(.thumbnail, item.thumbnail!))
        #expect(policy.decide(item, network: wifi, settings: policy.defaultSettings, cached: [], displayWidth: 800).action
                == .load(.original, item.original))
        #expect(policy.decide(item, network: wifi, settings: policy.defaultSettings, cached: []).action == .load(.original, item.original))
        // The truth table lists the condition apart.
        #expect(policy.readsThumbnailCoversDisplay)
        #expect(policy.truthTable().contains { $0.input.thumbnailCoversDisplay })
    }

    @Test func theDefaultTreeIgnoresWidths() throws {
        let policy = ImagePolicy.default
        #expect(!policy.readsThumbnailCoversDisplay)
        for (input, outcome) in policy.truthTable() where input.hasThumbnail {
            var covering = input
            covering.thumbnailCoversDisplay = true
            #expect(policy.outcome(for: covering) == outcome, "\(input)")
        }
    }

    @Test func theConditionIsValidated() throws {
        func load(_ rules: String, cases: String = "[]") throws -> ImagePolicy {
            try ImagePolicy(json: Array(#"{"settings": {}, "rules": [\#(rules), {"name": "rest", "action": "placeholder", "reason": "r"}], "cases": \#(cases)}"#.utf8), name: "p", source: "p.json")
        }
        // A cached thumbnail is not implied by a covering one.
        #expect { _ = try load(#"{"name": "a", "when": {"thumbnailCoversDisplay": true}, "action": "show-cached", "variant": "thumbnail", "reason": "r"}"#) }
            throws: { "\($0)".contains("shows the cached thumbnail but can fire when it is not cached") }
        // A covering thumbnail implies a thumbnail: loading it is possible.
        let policy = try load(#"{"name": "a", "when": {"thumbnailCoversDisplay": true}, "action": "load", "variant": "thumbnail", "reason": "r"}"#,
                              cases: #"[{"network": "wifi", "thumbnailCoversDisplay": true, "expect": {"action": "load", "variant": "thumbnail", "rule": "a"}}]"#)
        #expect(policy.failingCases().isEmpty)
        #expect(policy.rules[0].condition.summary == "the thumbnail covers the display")
        #expect { _ = try load(#"{"name": "a", "when": {"thumbnailCoversDisplay": "yes"}, "action": "placeholder", "reason": "r"}"#) }
            throws: { "\($0)".contains("thumbnailCoversDisplay") }
        #expect { _ = try load(#"{"name": "a", "when": {"network": ["wifi"]}, "action": "placeholder", "reason": "r"}"#,
                               cases: #"[{"network": "wifi", "hasThumbnail": false, "thumbnailCoversDisplay": true, "expect": {"action": "placeholder"}}]"#) }
            throws: { "\($0)".contains("\"thumbnailCoversDisplay\" is true but \"hasThumbnail\" is false") }
    }
}
