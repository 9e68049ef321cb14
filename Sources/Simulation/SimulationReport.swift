import Policy
import Support

/// What `imgpolicy simulate` prints: the SDK pass's figures, the baseline's, and the issue's
/// goals checked against them (met or not, with the figures).
package struct SimulationReport {
    package struct Setup {
        var items: Int
        var visible: Int
        var rowsPerSecond: Double
        var latency: LatencyRange
        var originalBytes: Int
        var thumbnailBytes: Int
        var script: NetworkScript
        var policy: String
        var seed: UInt64
        var plan: ScrollPlan
        /// `SimulationServer.latencyDigest`.
        var latencyDigest: String
        /// The connections each pass's transport may open to the server.
        var connectionsPerHost: Int
        /// CDN mode: the photographs served; nil for generated originals and thumbnails.
        var photos: PhotoLadders? = nil
        /// Every row's width on screen in pixels, when given.
        var displayWidth: Int? = nil
    }

    package struct Goal {
        var name: String
        /// nil: does not apply to this run (no cellular in the script, no upgrade expected).
        var met: Bool?
        var detail: String
    }

    package let setup: Setup
    package let sdk: SimulationPass.Result
    package let baseline: SimulationPass.Result

    package var timeToVisible: Percentiles { Percentiles(sdk.screen.timeToVisible) }
    package var upgradeLatency: Percentiles { Percentiles(sdk.screen.upgradeLatency) }
    package var firstScreen: Percentiles { Percentiles(sdk.screen.firstScreen) }

    /// Whether the run's loads failed for want of resources (the command exits 74: its figures
    /// measured nothing of the SDK).
    package var ranShortOfResources: Bool { sdk.screen.resourceFailures > 0 }

    /// Whether the run must exit 1: a wrong-slot or stale delivery or a duplicate transfer.
    package var failed: Bool {
        sdk.screen.wrongSlotDeliveries + sdk.screen.staleDeliveries + sdk.server.duplicateTransfers > 0
    }

    package static func bytes(_ figures: SimulationServer.Figures, kind: String) -> Int {
        figures.bytes[kind]?.values.reduce(0, +) ?? 0
    }

    package var goals: [Goal] {
        var goals: [Goal] = []
        // A run whose loads failed for want of descriptors, threads, memory or disk measured
        // nothing of the SDK: said first, so that no other goal reads as met on its own.
        goals.append(Goal(name: "no load failed for want of resources (descriptors, threads, memory, disk)",
                          met: sdk.screen.resourceFailures == 0,
                          detail: sdk.screen.resourceFailures == 0 ? "none"
                            : "\(sdk.screen.resourceFailures) failed; the first: \(sdk.screen.firstResourceFailure ?? "?")"))
        let problems = sdk.screen.wrongSlotDeliveries + sdk.screen.staleDeliveries + sdk.server.duplicateTransfers
        goals.append(Goal(name: "no wrong-slot, stale or duplicate", met: problems == 0,
                          detail: "\(sdk.screen.wrongSlotDeliveries) wrong-slot, \(sdk.screen.staleDeliveries) stale, \(sdk.server.duplicateTransfers) duplicate"))
        let cellularRows = sdk.screen.rowsShown["cellular"]?.count ?? 0
        let cellular = Self.bytes(sdk.server, kind: "cellular")
        if setup.photos != nil {
            // CDN mode: rows at their display width for the ideal bytes, instead of thumbnails.
            goals += ladderGoals
        } else if cellularRows > 0 {
            let budget = cellularRows * setup.thumbnailBytes
            goals.append(Goal(name: "bytes on cellular ≤ 1.05 × the thumbnails of the rows shown there",
                              met: Double(cellular) <= 1.05 * Double(budget),
                              detail: "\(cellular) bytes, \(Self.ratio(Double(cellular), Double(budget))) × \(budget) (\(cellularRows) rows × \(setup.thumbnailBytes))"))
            let naive = Self.bytes(baseline.server, kind: "cellular")
            let saving = naive > 0 ? 1 - Double(cellular) / Double(naive) : 0
            goals.append(Goal(name: "≥ 80 % fewer bytes than the baseline on cellular", met: naive > 0 ? saving >= 0.8 : nil,
                              detail: "\(cellular) against \(naive) bytes: \(Self.percent(saving)) fewer"))
        } else {
            goals.append(Goal(name: "bytes on cellular ≤ 1.05 × the thumbnails of the rows shown there", met: nil, detail: "no row shown on cellular"))
            goals.append(Goal(name: "≥ 80 % fewer bytes than the baseline on cellular", met: nil, detail: "no row shown on cellular"))
        }
        let ttvBound = Double(setup.latency.maximum + 20)
        goals.append(Goal(name: "time to visible p95 ≤ slowest latency + 20 ms", met: timeToVisible.count > 0 ? timeToVisible.p95 <= ttvBound : nil,
                          detail: "p95 \(Self.ms(timeToVisible.p95)) ms against \(Self.ms(ttvBound)) ms (\(timeToVisible.count) rows)"))
        // Issue 17: the rows on screen at the start, against a transport with no connection yet,
        // each wait about one latency (theirs), not one more for a first answer.
        let firstScreenBound = Double(setup.latency.maximum + 20)
        let firstScreenRows = firstScreen.count + sdk.screen.firstScreenLeftWithoutImage
        let firstScreenDetail = "p95 \(Self.ms(firstScreen.p95)) ms against \(Self.ms(firstScreenBound)) ms (\(firstScreen.count) rows, \(setup.connectionsPerHost) connections to the host)"
        if firstScreen.count == 0 {
            // Nothing timed (offline, a policy that shows the placeholder, rows that left first): nothing to judge.
            goals.append(Goal(name: "first screen on a fresh host p95 ≤ 1 latency (the slowest) + 20 ms", met: nil,
                              detail: "no row of the first screen showed an image (\(firstScreenRows) rows)"))
        } else if setup.connectionsPerHost < firstScreenRows {
            goals.append(Goal(name: "first screen on a fresh host p95 ≤ 1 latency (the slowest) + 20 ms", met: nil,
                              detail: firstScreenDetail + ": fewer connections than rows, so some wait for a connection (--connections-per-host \(firstScreenRows) to check this goal)"))
        } else {
            goals.append(Goal(name: "first screen on a fresh host p95 ≤ 1 latency (the slowest) + 20 ms", met: firstScreen.p95 <= firstScreenBound, detail: firstScreenDetail))
        }
        let upgradeBound = Double(setup.latency.maximum + 50)
        let expected = upgradeLatency.count + sdk.screen.notUpgraded
        goals.append(Goal(name: "every visible row upgraded within slowest latency + 50 ms",
                          met: expected > 0 ? sdk.screen.notUpgraded == 0 && upgradeLatency.max <= upgradeBound : nil,
                          detail: expected > 0
                            ? "\(upgradeLatency.count) of \(expected) upgraded, slowest \(Self.ms(upgradeLatency.max)) ms against \(Self.ms(upgradeBound)) ms"
                            : "no upgrade expected (no change to a better network with rows on screen)"))
        return goals
    }

    // MARK: - Text

    package var text: String {
        var lines: [String] = []
        let s = setup
        let images = s.photos.map { "photos of scripts/cdn-photos.sh at \($0.widths.count) widths, display \(s.displayWidth.map { "\($0) px" } ?? "not given")" }
            ?? "originals \(s.originalBytes) B, thumbnails \(s.thumbnailBytes) B"
        lines.append("imgpolicy simulate: \(s.items) items, \(s.visible) visible, \(Self.ms(s.rowsPerSecond)) rows/s, latency \(s.latency.description), \(images)")
        lines.append("  network \(s.script.description), policy \(s.policy), seed \(s.seed); \(s.plan.gestures) gestures over \(Self.ms(s.plan.duration)) s; \(s.connectionsPerHost) connections per host")
        for pass in [sdk, baseline] {
            let isSDK = pass.list == sdk.list && pass.durationMs == sdk.durationMs
            let ttv = Percentiles(pass.screen.timeToVisible)
            lines.append("")
            lines.append(isSDK ? "SDK (\(pass.list)):" : "baseline (naive: every visible row loads the original, nothing cancelled or shared):")
            lines.append("  wrong-slot deliveries \(pass.screen.wrongSlotDeliveries), stale deliveries \(pass.screen.staleDeliveries), duplicate transfers \(pass.server.duplicateTransfers)")
            lines.append("  requests \(pass.server.requests), bytes \(pass.server.totalBytes)" + Self.byNetworkText(pass.server))
            if pass.screen.failures > 0 {
                lines.append("  failed loads \(pass.screen.failures), for want of resources \(pass.screen.resourceFailures)"
                             + (pass.screen.firstResourceFailure.map { " (the first: " + TerminalText.escaped($0) + ")" } ?? ""))
            }
            let entry = Percentiles(pass.screen.timeToVisibleFromEntry)
            lines.append("  time to visible: p50 \(Self.ms(ttv.p50)) ms, p95 \(Self.ms(ttv.p95)) ms, max \(Self.ms(ttv.max)) ms (\(ttv.count) rows; \(pass.screen.leftWithoutImage) left the screen first)")
            lines.append("    from the row's appearance (flings included): p50 \(Self.ms(entry.p50)) ms, p95 \(Self.ms(entry.p95)) ms, max \(Self.ms(entry.max)) ms")
            let beyond = Percentiles(pass.screen.beyondLatency)
            lines.append("    beyond the URL's own latency, for \(beyond.count) images from the network: p50 \(Self.ms(beyond.p50)) ms, p95 \(Self.ms(beyond.p95)) ms, max \(Self.ms(beyond.max)) ms")
            let first = Percentiles(pass.screen.firstScreen), firstBeyond = Percentiles(pass.screen.firstScreenBeyondLatency)
            lines.append("  first screen (\(first.count) rows on screen at the start, a fresh host, \(s.connectionsPerHost) connections to it): p50 \(Self.ms(first.p50)) ms, p95 \(Self.ms(first.p95)) ms, max \(Self.ms(first.max)) ms; beyond each URL's own latency p50 \(Self.ms(firstBeyond.p50)) ms, p95 \(Self.ms(firstBeyond.p95)) ms")
            if isSDK {
                for change in pass.screen.changes {
                    lines.append("  at \(Self.ms(change.time)) s the network became \(change.state) while the user was \(change.gesture.rawValue): \(change.expected) rows on screen to upgrade")
                }
                let up = upgradeLatency
                lines.append("  upgrades \(pass.screen.upgrades); after a network change: p50 \(Self.ms(up.p50)) ms, max \(Self.ms(up.max)) ms (\(up.count) rows, \(pass.screen.notUpgraded) not upgraded, \(pass.screen.leftBeforeUpgrade) left first)")
            }
            if let statistics = pass.listStatistics { lines.append("  list: " + statistics) }
            if pass.server.offlineRequests > 0 { lines.append("  requests made while offline (dropped): \(pass.server.offlineRequests)") }
            if pass.lateByMs > 50 { lines.append("  note: the driver applied a step up to \(Self.ms(pass.lateByMs)) ms late (a busy machine)") }
            if isSDK {
                for problem in pass.screen.problems { lines.append("  " + TerminalText.escaped(problem)) }
                for path in pass.server.duplicatedPaths { lines.append("  duplicate transfer: \(path)") }
            }
        }
        lines += ladderLines
        lines.append("")
        lines.append("goals:")
        for goal in goals {
            let verdict = goal.met.map { $0 ? "met    " : "NOT MET" } ?? "n/a    "
            lines.append("  \(verdict) \(goal.name): \(goal.detail)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func byNetworkText(_ figures: SimulationServer.Figures) -> String {
        guard !figures.bytes.isEmpty else { return "" }
        return " (" + figures.bytes.keys.sorted().map { kind in
            let variants = figures.bytes[kind] ?? [:]
            return "\(kind): original \(variants[.original] ?? 0), thumbnail \(variants[.thumbnail] ?? 0)"
        }.joined(separator: "; ") + ")"
    }

    // MARK: - JSON

    package var json: JSONValue {
        let ttv = timeToVisible, up = upgradeLatency
        var members: [(key: String, value: JSONValue)] = [
            ("list", .string(sdk.list)),
            ("wrongSlotDeliveries", .int(sdk.screen.wrongSlotDeliveries)),
            ("duplicateTransfers", .int(sdk.server.duplicateTransfers)),
            ("staleDeliveries", .int(sdk.screen.staleDeliveries)),
            ("upgrades", .int(sdk.screen.upgrades)),
            ("bytes", Self.bytesJSON(sdk.server)),
            ("timeToVisibleMs", Self.percentilesJSON(ttv)),
            ("timeToVisibleFromEntryMs", Self.percentilesJSON(Percentiles(sdk.screen.timeToVisibleFromEntry))),
            ("timeToVisibleBeyondLatencyMs", Self.percentilesJSON(Percentiles(sdk.screen.beyondLatency))),
            ("firstScreenMs", Self.firstScreenJSON(sdk.screen)),
            ("networkChanges", .array(sdk.screen.changes.map { change in
                .object([("atS", .ms(change.time)), ("state", .string(change.state.description)), ("gesture", .string(change.gesture.rawValue)),
                         ("rowsToUpgrade", .int(change.expected))])
            })),
            ("upgradeLatencyMs", .object([("p50", .ms(up.p50)), ("max", .ms(up.max)), ("count", .int(up.count)),
                                          ("notUpgraded", .int(sdk.screen.notUpgraded)), ("leftFirst", .int(sdk.screen.leftBeforeUpgrade))])),
            ("requests", .int(sdk.server.requests)),
            ("offlineRequests", .int(sdk.server.offlineRequests)),
            ("rowsShown", .object(sdk.screen.rowsShown.keys.sorted().map { ($0, .int(sdk.screen.rowsShown[$0]?.count ?? 0)) })),
            ("rowsLeftWithoutImage", .int(sdk.screen.leftWithoutImage)),
            ("failedLoads", .int(sdk.screen.failures)),
            ("listStatistics", sdk.listStatistics.map { .string($0) } ?? .null),
            ("problems", .array(sdk.screen.problems.map { .string($0) } + sdk.server.duplicatedPaths.map { .string("duplicate transfer: " + $0) })),
        ]
        let naiveTTV = Percentiles(baseline.screen.timeToVisible)
        members.append(("baseline", .object([
            ("bytes", Self.bytesJSON(baseline.server)),
            ("timeToVisibleMs", Self.percentilesJSON(naiveTTV)),
            ("timeToVisibleFromEntryMs", Self.percentilesJSON(Percentiles(baseline.screen.timeToVisibleFromEntry))),
            ("timeToVisibleBeyondLatencyMs", Self.percentilesJSON(Percentiles(baseline.screen.beyondLatency))),
            ("firstScreenMs", Self.firstScreenJSON(baseline.screen)),
            ("wrongSlotDeliveries", .int(baseline.screen.wrongSlotDeliveries)),
            ("duplicateTransfers", .int(baseline.server.duplicateTransfers)),
            ("requests", .int(baseline.server.requests)),
            ("offlineRequests", .int(baseline.server.offlineRequests)),
        ])))
        if let ladders = ladderJSON { members.append(("ladders", ladders)) }
        members.append(("goals", .array(goals.map { goal in
            .object([("name", .string(goal.name)), ("met", goal.met.map { .bool($0) } ?? .null), ("detail", .string(goal.detail))])
        })))
        let s = setup
        members.append(("setup", .object([
            ("items", .int(s.items)), ("visible", .int(s.visible)), ("rowsPerSecond", .ms(s.rowsPerSecond)),
            ("latencyMs", .object([("min", .int(s.latency.minimum)), ("max", .int(s.latency.maximum))])),
            ("originalBytes", .int(s.originalBytes)), ("thumbnailBytes", .int(s.thumbnailBytes)),
            ("networkScript", .string(s.script.description)), ("policy", .string(s.policy)), ("seed", .string(String(s.seed))),
            ("plan", .object([("gestures", .int(s.plan.gestures)), ("durationS", .ms(s.plan.duration)), ("steps", .int(s.plan.steps.count)),
                              ("digest", .string(s.plan.digest))])),
            ("latencyDigest", .string(s.latencyDigest)),
            ("connectionsPerHost", .int(s.connectionsPerHost)),
            ("displayWidth", s.displayWidth.map { .int($0) } ?? .null),
            ("photos", s.photos.map { .int($0.names.count) } ?? .null),
        ])))
        members.append(("durationMs", .ms(sdk.durationMs + baseline.durationMs)))
        return JSONValue(.object(members))
    }

    private static func percentilesJSON(_ figures: Percentiles) -> JSONValue {
        .object([("p50", .ms(figures.p50)), ("p95", .ms(figures.p95)), ("max", .ms(figures.max)), ("count", .int(figures.count))])
    }

    /// The first screen's times to visible, and the same beyond each URL's own latency.
    private static func firstScreenJSON(_ screen: Screen.Figures) -> JSONValue {
        let first = Percentiles(screen.firstScreen), beyond = Percentiles(screen.firstScreenBeyondLatency)
        return .object([("p50", .ms(first.p50)), ("p95", .ms(first.p95)), ("max", .ms(first.max)), ("count", .int(first.count)),
                        ("beyondLatencyP50", .ms(beyond.p50)), ("beyondLatencyP95", .ms(beyond.p95)),
                        ("leftWithoutImage", .int(screen.firstScreenLeftWithoutImage))])
    }

    private static func bytesJSON(_ figures: SimulationServer.Figures) -> JSONValue {
        .object([
            ("total", .int(figures.totalBytes)),
            ("byNetwork", .object(figures.bytes.keys.sorted().map { kind in
                (kind, .object([("original", .int(figures.bytes[kind]?[.original] ?? 0)), ("thumbnail", .int(figures.bytes[kind]?[.thumbnail] ?? 0))]))
            })),
        ])
    }

    package static func ms(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    package static func ratio(_ value: Double, _ budget: Double) -> String {
        budget > 0 ? String((value / budget * 100).rounded() / 100) : "∞"
    }

    package static func percent(_ share: Double) -> String {
        "\((share * 1000).rounded() / 10) %"
    }
}

// File-private: other commands may build JSON their own way.
extension JSONValue {
    fileprivate static func int(_ value: Int) -> JSONValue { JSONValue(.number(String(value))) }
    fileprivate static func ms(_ value: Double) -> JSONValue { JSONValue(.number(SimulationReport.ms(value))) }
    fileprivate static func string(_ text: String) -> JSONValue { JSONValue(.string(text)) }
    fileprivate static func bool(_ flag: Bool) -> JSONValue { JSONValue(.bool(flag)) }
    fileprivate static func object(_ members: [(String, JSONValue)]) -> JSONValue { JSONValue(.object(members.map { (key: $0.0, value: $0.1) })) }
    fileprivate static func array(_ elements: [JSONValue]) -> JSONValue { JSONValue(.array(elements)) }
    fileprivate static var null: JSONValue { JSONValue(.null) }
}
