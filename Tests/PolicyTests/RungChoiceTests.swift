import Foundation
import Policy
import Testing
import TestSupport

/// Issue 18, decisions that choose a rung: a rule's `"rung"` picks the narrowest rung covering
/// the display × a factor, capped by width, bytes and time at the measured rate, or the narrowest
/// of all; `show-cached` rules show the narrowest cached rung that covers, or the widest cached.
/// Checked against the rules restated plainly here, over seeded random ladders.
struct RungChoiceTests {
    static let network = NetworkState(.cellular, isExpensive: true)

    /// A policy of one rule that loads the rung `choice` picks.
    static func policy(loading choice: RungChoice) throws -> ImagePolicy {
        try ImagePolicy(name: "rungs", settings: [], rules: [PolicyRule("choose", choosing: .load(choice), reason: "a rung")])
    }

    static func ladder(_ widths: [Int], bytes: [Int?]? = nil) throws -> ImageLadder {
        try ImageLadder(rungs: widths.enumerated().map { index, width in
            ImageRung(url: ImageURL("https://cdn.example/p.jpg?w=\(width)")!, width: width, bytes: bytes?[index])
        })
    }

    /// The rule as docs/ladders.md states it, written without the library's code: the narrowest
    /// rung at least ceil(display × factor) wide (the widest when none is or the display is not
    /// known); then the widest rung no wider than that one that every cap allows; else the
    /// narrowest.
    static func reference(_ rungs: [ImageRung], display: Int?, factor: Double, maxWidth: Int?, maxBytes: Int?,
                          withinMilliseconds: Int?, bytesPerSecond: Double?, smallest: Bool) -> Int {
        let sorted = rungs.sorted { $0.width < $1.width }
        var start = sorted.last!.width
        if smallest {
            start = sorted[0].width
        } else if let display {
            let wanted = (Double(display) * factor).rounded(.up)
            if let covering = sorted.first(where: { Double($0.width) >= wanted }) { start = covering.width }
        }
        let allowed = sorted.filter { rung in
            rung.width <= start
                && (maxWidth == nil || rung.width <= maxWidth!)
                && (maxBytes == nil || rung.bytes == nil || rung.bytes! <= maxBytes!)
                && (withinMilliseconds == nil || bytesPerSecond == nil || rung.bytes == nil
                    || Double(rung.bytes!) <= bytesPerSecond! * Double(withinMilliseconds!) / 1000)
        }
        return allowed.last?.width ?? sorted[0].width
    }

    @Test func theCoveringRungIsTheNarrowestAtLeastTheDisplayWidth() throws {
        let policy = try Self.policy(loading: RungChoice(covering: 1))
        let item = ImageItem(id: "p", ladder: try Self.ladder([160, 320, 640, 1280, 2560]))
        let width = { (display: Int?) in
            policy.decide(item, network: Self.network, settings: policy.defaultSettings, cached: [], displayWidth: display).rung?.width
        }
        #expect(width(400) == 640 && width(320) == 320 && width(321) == 640 && width(1) == 160)
        #expect(width(5000) == 2560, "wider than every rung: the widest")
        #expect(width(nil) == 2560, "no display width: the widest, as loading the original")
        let decision = policy.decide(item, network: Self.network, settings: policy.defaultSettings, cached: [], displayWidth: 400)
        #expect(decision.action == .load(.thumbnail, ImageURL("https://cdn.example/p.jpg?w=640")!))
        #expect(policy.decide(item, network: Self.network, settings: policy.defaultSettings, cached: [], displayWidth: 2000).variant == .original)
    }

    @Test func capsGoNarrowerNeverWider() throws {
        let ladder = try Self.ladder([160, 320, 640, 1280], bytes: [9_000, 30_000, 90_000, 300_000])
        let item = ImageItem(ladder: ladder)
        func width(_ choice: RungChoice, display: Int? = 1000, rate: Double? = nil) throws -> Int? {
            try Self.policy(loading: choice).decide(item, network: Self.network, settings: ResolvedSettings(bits: 0), cached: [],
                                                    displayWidth: display, estimate: rate.map { LinkEstimate(bytesPerSecond: $0) }).rung?.width
        }
        #expect(try width(RungChoice(covering: 1, maxWidth: 700)) == 640)
        #expect(try width(RungChoice(covering: 1, maxBytes: 50_000)) == 320)
        #expect(try width(RungChoice(covering: 1, within: .milliseconds(1000)), rate: 100_000) == 640)
        #expect(try width(RungChoice(covering: 1, within: .milliseconds(1000))) == 1280, "an unmeasured link is not capped")
        #expect(try width(RungChoice(covering: 1, maxBytes: 10)) == 160, "no rung allowed: the narrowest")
        #expect(try width(RungChoice(covering: 2), display: 300) == 640)
        #expect(try width(RungChoice.smallest) == 160)
    }

    @Test func anItemWithoutALadderChoosesBetweenItsThumbnailAndOriginal() throws {
        let policy = try Self.policy(loading: RungChoice(covering: 1, maxWidth: 1280))
        let known = ImageItem(original: ImageURL("https://i.example/o.jpg")!, thumbnail: ImageURL("https://i.example/t.jpg")!,
                              originalWidth: 4000, thumbnailWidth: 400)
        let decide = { (item: ImageItem, display: Int?) in
            policy.decide(item, network: Self.network, settings: policy.defaultSettings, cached: [], displayWidth: display)
        }
        #expect(decide(known, 300).variant == .thumbnail && decide(known, 300).rung?.width == 400)
        #expect(decide(known, 800).variant == .thumbnail, "the original is wider than the 1280 cap")
        // Widths unknown: the thumbnail covers nothing, the original is the full resolution, wider
        // than any cap; the thumbnail is what the cap leaves.
        let unknown = ImageItem(original: ImageURL("https://i.example/o.jpg")!, thumbnail: ImageURL("https://i.example/t.jpg")!)
        #expect(decide(unknown, 300).variant == .thumbnail && decide(unknown, 300).rung == nil)
        let uncapped = try Self.policy(loading: RungChoice(covering: 1))
        #expect(uncapped.decide(unknown, network: Self.network, settings: uncapped.defaultSettings, cached: [], displayWidth: 300).variant == .original)
        let single = ImageItem(original: ImageURL("https://i.example/o.jpg")!)
        #expect(decide(single, 300).variant == .original, "one rung: it, whatever the caps")
    }

    /// 2,000 random ladders, displays, factors, caps and rates against `reference`.
    @Test func randomChoicesFollowTheRules() throws {
        var random = SeededGenerator(seed: 0x5EED_0018, label: "randomChoicesFollowTheRules")
        for round in 0..<2_000 {
            let count = Int.random(in: 1...12, using: &random)
            var widths = Set<Int>()
            while widths.count < count { widths.insert(Int.random(in: 1...5_000, using: &random)) }
            let ordered = Array(widths).shuffled(using: &random)
            let bytes: [Int?] = ordered.map { width in Bool.random(using: &random) ? nil : width * Int.random(in: 1...200, using: &random) }
            let ladder = try Self.ladder(ordered, bytes: bytes)
            let display = Bool.random(using: &random) ? nil : Int.random(in: 1...6_000, using: &random)
            let factor = [0.5, 1, 1.5, 2, 3].randomElement(using: &random)!
            let maxWidth = Bool.random(using: &random) ? nil : Int.random(in: 1...5_000, using: &random)
            let maxBytes = Bool.random(using: &random) ? nil : Int.random(in: 1...500_000, using: &random)
            let within = Bool.random(using: &random) ? nil : Int.random(in: 1...5_000, using: &random)
            let rate = Bool.random(using: &random) ? nil : Double(Int.random(in: 1...1_000_000, using: &random))
            let smallest = Int.random(in: 0..<8, using: &random) == 0
            let choice = smallest ? RungChoice.smallest
                : RungChoice(covering: factor, maxWidth: maxWidth, maxBytes: maxBytes, within: within.map { .milliseconds($0) })
            let policy = try Self.policy(loading: choice)
            let decision = policy.decide(ImageItem(ladder: ladder), network: Self.network, settings: policy.defaultSettings, cached: [],
                                         displayWidth: display, estimate: rate.map { LinkEstimate(bytesPerSecond: $0) })
            let expected = smallest
                ? ladder.narrowest.width
                : Self.reference(ladder.rungs, display: display, factor: factor, maxWidth: maxWidth, maxBytes: maxBytes,
                                 withinMilliseconds: within, bytesPerSecond: rate, smallest: false)
            #expect(decision.rung?.width == expected,
                    "round \(round): widths \(ladder.rungs.map(\.width)) bytes \(ladder.rungs.map(\.bytes)) display \(String(describing: display)) \(choice) rate \(String(describing: rate))")
            #expect(decision.url == ladder.rungs.first { $0.width == expected }?.url)
            if decision.rung?.width != expected { return }
        }
    }

    /// The bundled fit-display policy over random ladders, displays, cached rungs and networks,
    /// against its rules restated: a cached rung covering the display is shown (the narrowest
    /// such); offline the widest cached rung, else the placeholder; otherwise a load.
    @Test func fitDisplayShowsWhatIsCachedAsItsRulesSay() throws {
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/fit-display.json")
        var random = SeededGenerator(seed: 0xF17_D15B, label: "fitDisplayShowsWhatIsCachedAsItsRulesSay")
        for round in 0..<2_000 {
            var widths = Set<Int>()
            let count = Int.random(in: 1...8, using: &random)
            while widths.count < count { widths.insert(Int.random(in: 50...3_000, using: &random)) }
            let ladder = try Self.ladder(Array(widths))
            let item = ImageItem(ladder: ladder)
            let cachedURLs = Set(ladder.rungs.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }.map(\.url))
            let display = Bool.random(using: &random) ? nil : Int.random(in: 1...3_500, using: &random)
            let kind = NetworkKind.allCases.randomElement(using: &random)!
            let cache = StaticCacheContents(urls: cachedURLs)
            let decision = policy.decide(item, network: NetworkState(kind), settings: policy.defaultSettings, cache: cache,
                                         displayWidth: display)
            let cached = ladder.rungs.filter { cachedURLs.contains($0.url) }
            let covering = cached.first { rung in display.map { rung.width >= $0 } ?? (rung == ladder.widest) }
                ?? (cached.last == ladder.widest ? ladder.widest : nil)
            let context = "round \(round): widths \(ladder.rungs.map(\.width)) cached \(cached.map(\.width)) display \(String(describing: display)) \(kind)"
            if let covering {
                #expect(decision.action == .showCached(covering == ladder.widest ? .original : .thumbnail, covering.url), "\(context)")
            } else if kind == .offline, let widest = cached.last {
                #expect(decision.action.kind == .showCached && decision.url == widest.url && decision.rule == "offline-widest-cached", "\(context)")
            } else if kind == .offline {
                #expect(decision.action == .placeholder, "\(context)")
            } else if decision.action.kind == .load {
                let loaded = try #require(decision.rung, "\(context)")
                #expect(!cached.contains { $0.width >= loaded.width }, "\(context): loads \(loaded.width) px though a rung as wide is cached")
            } else {
                // A load rule whose rung is cached, or narrower than a cached one, shows that one.
                let shown = try #require(decision.rung, "\(context)")
                #expect(decision.action.kind == .showCached && cached.contains(shown), "\(context)")
                #expect(!cached.contains { $0.width < shown.width && $0.width >= (display ?? .max) }, "\(context)")
            }
        }
    }
}

/// Hostile rung rules and ladder cases in policy files: each is one `.invalid` error naming the
/// file, the line and what is wrong.
struct RungPolicyValidationTests {
    static let catchAll = #"{"name": "rest", "action": "placeholder", "reason": "r"}"#

    func problem(rule: String, cases: String = "") -> String {
        let json = "{\"rules\": [\n\(rule),\n\(Self.catchAll)]\(cases.isEmpty ? "" : ", \"cases\": [\n\(cases)]")}"
        do {
            _ = try ImagePolicy(json: Array(json.utf8), name: "p", source: "p.json")
            return "no error"
        } catch {
            #expect(error.code == .invalid, "\(error)")
            return error.description
        }
    }

    static let load = #"{"name": "fit", "when": {"network": "wifi"}, "action": "load", "rung": {"covering": 1}, "reason": "r"}"#

    @Test(arguments: [
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": "biggest", "reason": "r"}"#, "must be \"smallest\" or an object"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"covering": 0}, "reason": "r"}"#, "\"covering\" must be a factor from 0.05"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"covering": 9}, "reason": "r"}"#, "from 0.05 to 8.0 (1 is the display width), found 9"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"covering": 1e-320}, "reason": "r"}"#, "found 1e-320"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"covering": "1"}, "reason": "r"}"#, "found a string"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"maxWidth": 0}, "reason": "r"}"#, "\"maxWidth\" must be a whole number of pixels from 1"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"maxBytes": 1.5}, "reason": "r"}"#, "\"maxBytes\" must be a whole number of bytes"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"within": 60001}, "reason": "r"}"#, "\"within\" must be a whole number of milliseconds from 1 to 60000"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "rung": {"colour": 1}, "reason": "r"}"#, "unknown key \"colour\""),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "load", "variant": "original", "rung": "smallest", "reason": "r"}"#, "takes no \"variant\""),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "placeholder", "rung": "smallest", "reason": "r"}"#, "goes with the action \"load\" or \"show-cached\""),
        (#"{"name": "a", "when": {"cached": {"any": true}}, "action": "show-cached", "rung": {"covering": 1}, "reason": "r"}"#, "must be \"covering\" or \"widest\""),
        (#"{"name": "a", "when": {"cached": {"any": true}}, "action": "show-cached", "rung": "narrowest", "reason": "r"}"#, "must be \"covering\" or \"widest\", found \"narrowest\""),
        (#"{"name": "a", "when": {"cached": {"any": true}}, "action": "show-cached", "rung": "covering", "reason": "r"}"#, "shows the cached rung covering the display but can fire when no cached rung covers it"),
        (#"{"name": "a", "when": {"network": "wifi"}, "action": "show-cached", "rung": "widest", "reason": "r"}"#, "shows the widest cached rung but can fire when no rung is cached"),
        (#"{"name": "a", "when": {"cached": {"cover": true}}, "action": "show-cached", "rung": "widest", "reason": "r"}"#, "unknown key \"cover\" in \"cached\""),
        (#"{"name": "a", "when": {"network": "offline"}, "action": "load", "rung": "smallest", "reason": "r"}"#, "loads a rung but can fire offline"),
    ])
    func aHostileRungRuleIsOneLineNamingTheRule(rule: String, expected: String) {
        let message = problem(rule: rule)
        #expect(message.contains(expected), "\(message)")
        #expect(message.hasPrefix("p.json: line 2"), "\(message)")
        #expect(!message.contains("\n"))
    }

    @Test(arguments: [
        (#"{"network": "wifi", "expect": {"rungWidth": 640}}"#, "\"rungWidth\" expects a rung, but the case gives no \"ladder\""),
        (#"{"network": "wifi", "displayWidth": 400, "expect": {"rule": "fit"}}"#, "\"displayWidth\" describes a ladder"),
        (#"{"network": "wifi", "ladder": [320, 320], "expect": {"rule": "fit"}}"#, "widths must be distinct"),
        (#"{"network": "wifi", "ladder": [], "expect": {"rule": "fit"}}"#, "at least one rung"),
        (#"{"network": "wifi", "ladder": [320, 640], "cachedWidths": [400], "expect": {"rule": "fit"}}"#, "400, which is not a width of the case's \"ladder\""),
        (#"{"network": "wifi", "ladder": [320, 640], "expect": {"rungWidth": 400}}"#, "\"rungWidth\" is 400, which is not a width"),
        (#"{"network": "wifi", "ladder": [320, 640], "cached": ["original"], "expect": {"rule": "fit"}}"#, "says what is cached with \"cachedWidths\""),
        (#"{"network": "wifi", "ladder": [320, 640], "expect": {"variant": "original"}}"#, "expects a \"rungWidth\", not a \"variant\""),
        (#"{"network": "wifi", "ladder": [320, 640], "expect": {"prefetch": "nothing"}}"#, "must expect a \"rungWidth\", an \"action\" or a \"rule\""),
        (#"{"network": "wifi", "ladder": [{"width": 320, "bytes": 0}], "expect": {"rule": "fit"}}"#, "\"bytes\" must be a whole number of bytes from 1"),
        (#"{"network": "wifi", "ladder": [0], "expect": {"rule": "fit"}}"#, "\"ladder\" entry 1 must be a whole number of pixels from 1"),
        (#"{"network": "wifi", "ladder": [320, 640], "cachedWidths": [320, 320], "expect": {"rule": "fit"}}"#, "names 320 twice"),
        (#"{"network": "wifi", "ladder": [320, 640], "expect": {"action": "load", "rungWidth": null}}"#, "is null (the placeholder) but \"action\" is \"load\""),
        (#"{"network": "wifi", "ladder": [320, 640], "expect": {"action": "placeholder", "rungWidth": 320}}"#, "but \"rungWidth\" names a rung"),
    ])
    func aHostileLadderCaseIsOneLineNamingTheCase(policyCase: String, expected: String) {
        let message = problem(rule: Self.load, cases: policyCase)
        #expect(message.contains(expected), "\(message)")
        #expect(message.hasPrefix("p.json: line"), "\(message)")
    }

    /// Found by review: a case without a ladder expecting "load original" passed against a rung
    /// rule, whose real decision depends on the item's widths. It is refused.
    @Test func aVariantCaseOfARungRuleIsRefused() {
        let message = problem(rule: Self.load, cases: #"{"network": "wifi", "expect": {"action": "load", "variant": "original"}}"#)
        #expect(message.contains("case 1: expects load original, but the rule \"fit\" that fires chooses a rung"), "\(message)")
        // The same case with a ladder is judged on the rung.
        #expect(problem(rule: Self.load, cases: #"{"network": "wifi", "ladder": [320, 640], "expect": {"action": "load", "rule": "fit"}}"#) == "no error")
    }

    @Test func aLadderCaseThatDoesNotHoldSaysWhichRungWasChosen() throws {
        let json = "{\"rules\": [\(Self.load), \(Self.catchAll)], \"cases\": ["
            + #"{"name": "too narrow", "network": "wifi", "ladder": [320, 640], "displayWidth": 400, "expect": {"rungWidth": 320}},"#
            + #"{"name": "holds", "network": "wifi", "ladder": [320, 640], "displayWidth": 400, "expect": {"action": "load", "rungWidth": 640, "rule": "fit"}},"#
            + #"{"name": "offline", "network": "offline", "ladder": [320, 640], "expect": {"rungWidth": null, "rule": "rest"}}]}"#
        let policy = try ImagePolicy(json: Array(json.utf8), name: "p", source: "p.json")
        let failures = policy.failingCases()
        #expect(failures.map(\.position) == [1])
        #expect(failures.first?.description == "case 1 (too narrow): expected a decision of the 320-px rung, got load of the 640-px rung by rule fit")
    }
}

/// Found by the probe: every policy, written before ladders or not, shows a cached rung rather
/// than downloading a narrower one or showing the placeholder, for items with a ladder; and an
/// item with both its own original and thumbnail and a ladder counts them as rungs.
struct CachedRungPreferenceTests {
    static func ladder(_ widths: [Int]) throws -> ImageLadder {
        try ImageLadder(template: "https://cdn.example/p.jpg?w={width}", widths: widths)
    }

    @Test func theDefaultPolicyShowsACachedMiddleRungInsteadOfDownloadingTheThumbnail() throws {
        let ladder = try Self.ladder([100, 200, 400])
        let item = ImageItem(id: "p", ladder: ladder)
        let policy = ImagePolicy.default
        let middle = StaticCacheContents(urls: [ladder.rungs[1].url])
        let cellular = policy.decide(item, network: NetworkState(.cellular), settings: policy.defaultSettings, cache: middle)
        #expect(cellular.action == .showCached(.thumbnail, ladder.rungs[1].url), "\(cellular)")
        #expect(cellular.rule == "cellular-thumbnail" && cellular.reason.contains("200 px") && cellular.reason.contains("instead of downloading"))
        let offline = policy.decide(item, network: NetworkState(.offline), settings: policy.defaultSettings, cache: middle)
        #expect(offline.action == .showCached(.thumbnail, ladder.rungs[1].url) && offline.reason.contains("instead of the placeholder"), "\(offline)")
        // Wi-Fi loads the original: nothing cached is as wide, so it downloads.
        let wifi = policy.decide(item, network: NetworkState(.wifi), settings: policy.defaultSettings, cache: middle)
        #expect(wifi.action == .load(.original, ladder.widest.url))
        // An item without a ladder is decided exactly as the article's tree says.
        let plain = ImageItem(id: "q", original: ImageURL("https://i.example/o.jpg")!, thumbnail: ImageURL("https://i.example/t.jpg")!)
        let nothing = policy.decide(plain, network: NetworkState(.offline), settings: policy.defaultSettings,
                                    cache: StaticCacheContents(urls: [ImageURL("https://i.example/other.jpg")!]))
        #expect(nothing.action == .placeholder && nothing.reason == "offline and nothing cached: the placeholder is shown")
    }

    @Test func anItemsOwnOriginalAndThumbnailAreRungsBesideItsLadder() throws {
        let original = ImageURL("https://img.example/o.jpg")!, thumbnail = ImageURL("https://img.example/t.jpg")!
        let item = ImageItem(id: "both", original: original, thumbnail: thumbnail, ladder: try Self.ladder([320, 640]))
        let policy = try ImagePolicy.load(contentsOf: PackagePaths.policies + "/fit-display.json")
        let cache = StaticCacheContents(urls: [original])
        for kind in [NetworkKind.offline, .wifi, .cellular] {
            let decision = policy.decide(item, network: NetworkState(kind), settings: policy.defaultSettings, cache: cache, displayWidth: 400)
            #expect(decision.action == .showCached(.original, original), "\(kind): \(decision)")
        }
        // Only the cached thumbnail (width unknown: the narrowest): offline shows it; Wi-Fi loads the 640 rung as a thumbnail.
        let thumbnailOnly = StaticCacheContents(urls: [thumbnail])
        let offline = policy.decide(item, network: NetworkState(.offline), settings: policy.defaultSettings, cache: thumbnailOnly, displayWidth: 400)
        #expect(offline.action == .showCached(.thumbnail, thumbnail), "\(offline)")
        let wifi = policy.decide(item, network: NetworkState(.wifi), settings: policy.defaultSettings, cache: thumbnailOnly, displayWidth: 400)
        #expect(wifi.action == .load(.thumbnail, try Self.ladder([320, 640]).widest.url), "\(wifi)")
    }

    @Test func aThumbnailWiderThanItsOriginalIsSortedByWidth() throws {
        let item = ImageItem(original: ImageURL("https://i.example/p-160.jpg")!, thumbnail: ImageURL("https://i.example/p-320.jpg")!,
                             originalWidth: 160, thumbnailWidth: 320)
        let smallest = try ImagePolicy(name: "s", settings: [], rules: [PolicyRule("s", choosing: .load(.smallest), reason: "r")])
        let decision = smallest.decide(item, network: NetworkState(.cellular), settings: smallest.defaultSettings, cached: [])
        #expect(decision.url?.absoluteString == "https://i.example/p-160.jpg" && decision.variant == .original)
    }
}
