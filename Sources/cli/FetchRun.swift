import Decoding
import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Policy
import Support

/// Carries out decisions for `imgpolicy --fetch`: items loaded concurrently, with progress on a
/// terminal, one line per item in item order, and the failure to exit with.
///
/// It streams (issue 16, item 9): at most `maximumInFlight` loads run at once, and each item's
/// line is written as soon as the items before it are reported; an item's image is dropped once
/// its line is made (kept only for a run of one item, for `--output` and `--size`), so memory
/// holds the items, their decisions and what is in flight, never every result. Lines finished
/// ahead of a slow item wait for it (at most `maximumAhead` of them; no new load starts past that).
///
/// Loads go through an `ImageLoader` over the run's one network state and settings, so that a
/// "show cached" decision whose cached copy proves unreadable (another process cleared or evicted
/// it meanwhile) is made again instead of failing as offline. After every item, the disk writes
/// are flushed; each distinct failed write is reported on one line and the run exits 74.
struct FetchRun {
    let loader: ImageLoader
    let json: Bool
    /// `--size`, for a run of one item: its image is decoded to fit, and its line says so.
    let size: SizeOption.Box?
    /// What the run's loads cost: the summary line, and the ledger in the cache folder.
    let usage = DataUsageRecorder()

    /// Loads running at once, at most (the transport queues beyond its own connection limits).
    static let maximumInFlight = 64
    /// Items loaded ahead of the first one not reported yet, at most (their lines wait in memory).
    static let maximumAhead = 4096

    var pipeline: ImagePipeline { loader.pipeline }

    /// A run over `pipeline` that decides again, when it must, with `policy`, the network state
    /// read once for the run and the resolved settings (with the command's `--set` overrides).
    init(pipeline: ImagePipeline, json: Bool, size: SizeOption.Box?, policy: ImagePolicy, network: NetworkState,
         settings: ResolvedSettings, logger: Logger) {
        var values: [String: SettingValue] = [:]
        for (position, declaration) in policy.settings.enumerated() {
            values[declaration.key] = .bool(settings.isOn(at: position))
        }
        loader = ImageLoader(policy: policy, reachability: FixedReachability(network),
                             settings: InMemorySettingsStore(values), pipeline: pipeline, usage: usage, logger: logger)
        self.json = json
        self.size = size
    }

    /// What is left once every line was written.
    struct Results {
        /// The image of a run of one item (nil for longer runs, or when there is none).
        var image: FetchedImage?
        /// That image decoded to fit `--size` (nil without `--size` or without an image), or why
        /// it could not be (exit 65, after the report).
        var decoded: Result<DecodedImage?, CommandFailure> = .success(nil)
        /// The decision of a run of one item that ended as the placeholder, with no failure.
        var placeholder: Decision?
        var failure: CommandFailure?
    }

    /// One item's report, made when its load ended: what it prints, and why the run fails.
    private struct Report {
        var line: String
        /// A failed load's line for standard error.
        var errorLine: String?
        var failure: CommandFailure?
        var image: FetchedImage?
        var placeholder: Decision?
        /// The image decoded to fit `--size` (nil without it), or why it could not be.
        var decoded: Result<DecodedImage?, CommandFailure> = .success(nil)
    }

    /// Loads `item` as `decision` says and, with `size`, decodes its image to fit. Cached bytes
    /// that do not decode (damaged, cut short by a server before bodies were checked whole) are
    /// removed from the caches and counted (`ImagePipeline.discardUndecodable`), and the item is
    /// decided and loaded once more: fetched again where the network allows, the cached thumbnail
    /// or the placeholder where it does not. Bytes from the network that do not decode are
    /// removed too, and reported (exit 65): never an image that is none.
    static func load(_ item: ImageItem, decision: Decision, with loader: ImageLoader,
                     decodingTo size: SizeOption.Box?) async -> (SlotEvent, Result<DecodedImage?, CommandFailure>) {
        let event = await loader.load(item, decision: decision)
        guard let size, case .imageReady(_, _, let image) = event else { return (event, .success(nil)) }
        let decoded = await decode(image, to: size, pipeline: loader.pipeline)
        guard case .failure = decoded, image.source != .network, !Task.isCancelled,
              let again = try? loader.decide(item, displayWidth: size.width) else { return (event, decoded) }
        loader.logger.notice("a cached image did not decode: removed, deciding again", metadata: ["url": "\(image.url)"])
        let retried = await loader.load(item, decision: again)
        guard case .imageReady(_, _, let second) = retried else { return (retried, .success(nil)) }
        return (retried, await decode(second, to: size, pipeline: loader.pipeline))
    }

    /// `image` decoded to fit `size`; bytes that are damaged or no image are removed from the caches.
    private static func decode(_ image: FetchedImage, to size: SizeOption.Box, pipeline: ImagePipeline) async -> Result<DecodedImage?, CommandFailure> {
        do throws(DecodingError) {
            return .success(try ImageDecoder().decode(image.bytes, to: TargetSize(width: size.width, height: size.height)))
        } catch {
            if error.meansDamagedBytes { await pipeline.discardUndecodable(image.url) }
            return .failure(SizeOption.failure(decoding: image, error))
        }
    }

    /// Loads every item, writes each item's line to standard output in item order as soon as it
    /// can, then the usage summary; adds the run to the ledger.
    func run(items: [ImageItem], decisions: [Decision]) async -> Results {
        var results = Results()
        let output = StreamedOutput(progressTotal: items.count > 1 && isatty(2) != 0 ? items.count : nil)
        let loader = self.loader
        await withTaskGroup(of: (Int, SlotEvent, Result<DecodedImage?, CommandFailure>, Duration).self) { group in
            var next = 0, reported = 0, running = 0
            var waiting: [Int: Report] = [:]
            func startLoads() {
                while next < items.count, running < Self.maximumInFlight, next - reported < Self.maximumAhead {
                    let index = next, item = items[index], decision = decisions[index]
                    let size = items.count == 1 ? self.size : nil
                    group.addTask {
                        let start = ContinuousClock.now
                        let (event, decoded) = await Self.load(item, decision: decision, with: loader, decodingTo: size)
                        return (index, event, decoded, ContinuousClock.now - start)
                    }
                    next += 1
                    running += 1
                }
            }
            startLoads()
            while let (index, event, decoded, elapsed) = await group.next() {
                running -= 1
                output.loaded()
                waiting[index] = report(event, item: items[index], elapsed: elapsed, keepsImage: items.count == 1)
                waiting[index]?.decoded = decoded
                while let done = waiting.removeValue(forKey: reported) {
                    reported += 1
                    var line = done.line
                    if items.count == 1, let image = done.image {
                        results.image = image
                        results.decoded = done.decoded
                        line = SizeOption.annotate([line], with: (try? results.decoded.get()) ?? nil, json: json).joined()
                    }
                    results.placeholder = done.placeholder
                    output.write(line)
                    if let errorLine = done.errorLine { output.writeError(errorLine) }
                    if let failure = done.failure, results.failure == nil || failure.status == .ioError { results.failure = failure }
                }
                startLoads()
            }
        }
        output.endProgress()
        await pipeline.flush()
        for cause in pipeline.statistics.diskWriteFailureCauses {
            let (error, occurrences) = (cause.error, cause.occurrences)
            let more = occurrences > 1 ? " (and \(occurrences - 1) more cache writes failed so)" : ""
            output.writeError("imgpolicy: \(TerminalText.escaped("\(error)\(more)"))\n")
            results.failure = CommandFailure("", status: .ioError)
        }
        output.write(recordUsage(failure: &results.failure))
        output.flush()
        if let failure = results.failure {
            // Each failure was already reported on its own line; exit with the status only.
            results.failure = CommandFailure("", status: failure.status)
        }
        return results
    }

    /// The report of one item's event.
    private func report(_ event: SlotEvent, item: ImageItem, elapsed: Duration, keepsImage: Bool) -> Report {
        let prefix = item.id.map { "\($0): " } ?? ""
        let time = milliseconds(elapsed)
        switch event {
        case .placeholder(let decision):
            return Report(line: json ? line(decision, extra: [("source", nil), ("bytes", 0), ("ms", time)])
                                     : TerminalText.escaped("\(prefix)placeholder (rule \(decision.rule): \(decision.reason))") + "\n",
                          placeholder: decision)
        case .imageReady(let decision, let variant, let image):
            return Report(line: json
                ? line(decision, extra: [("source", image.source.rawValue), ("bytes", image.bytes.count), ("ms", time)])
                : TerminalText.escaped("\(prefix)\(decision.action.kind) \(variant)\(decision.rung.map { " (\($0.width) px)" } ?? "") from \(image.source), \(image.bytes.count) bytes, \(time) ms (rule \(decision.rule))") + "\n",
                          image: keepsImage ? image : nil)
        case .failed(let decision, let error, let fallback):
            let shown = fallback.map { "the cached thumbnail (\($0.bytes.count) bytes)" } ?? "the placeholder"
            let failure = CommandFailure(error.description, status: error.isRemote ? .unavailable : .ioError)
            return Report(line: json
                ? line(decision, extra: [("source", nil), ("bytes", 0), ("ms", time), ("error", error.description),
                                         ("errorKind", error.code.kind.description), ("fallback", fallbackJSON(fallback))])
                : TerminalText.escaped("\(prefix)\(decision.action.kind) \(decision.variant.map { "\($0)" } ?? "") failed, showing \(shown): \(error)") + "\n",
                          errorLine: "imgpolicy: \(TerminalText.escaped(failure.message))\n", failure: failure)
        case .decisionFailed(let error):
            return Report(line: TerminalText.escaped("\(prefix)\(error)") + "\n", failure: CommandFailure(error))
        }
    }

    /// Adds the run's usage to the ledger in the cache folder (a damaged day file set aside is
    /// reported on one line; a ledger that cannot be written too, and the run exits 74), and
    /// returns the summary line, its saved bytes estimated from the whole ledger.
    private func recordUsage(failure: inout CommandFailure?) -> String {
        var perOriginal = usage.usage.averageOriginalBytes
        if let disk = pipeline.disk {
            let ledger = DataUsageLedger(cacheFolder: disk.folder, logger: loader.logger)
            do {
                for notice in try ledger.save(usage) {
                    FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(notice.description))\n".utf8))
                }
            } catch {
                FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(error.description))\n".utf8))
                failure = CommandFailure("", status: .ioError)
            }
            perOriginal = ledger.read().total().averageOriginalBytes ?? perOriginal
        }
        let current = usage.usage
        if json {
            let members: [(key: String, value: JSONValue)] = [("type", JSONValue(.string("usage"))), ("usage", current.outputJSON(perOriginal: perOriginal))]
            return JSONWriter.compactText(of: JSONValue(.object(members))) + "\n"
        }
        return TerminalText.escaped("usage: " + current.summaryText(perOriginal: perOriginal)) + "\n"
    }

    private func milliseconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (value * 10).rounded() / 10
    }

    /// What a failed load shows instead: the cached thumbnail (`{"variant": "thumbnail", "url":
    /// …, "source": …, "bytes": N}`), or null for the placeholder.
    private func fallbackJSON(_ fallback: FetchedImage?) -> JSONValue {
        guard let fallback else { return JSONValue(.null) }
        return JSONValue(.object([("variant", JSONValue(.string("thumbnail"))), ("url", JSONValue(.string(fallback.url.absoluteString))),
                                  ("source", JSONValue(.string(fallback.source.rawValue))),
                                  ("bytes", JSONValue(.number(String(fallback.bytes.count))))]))
    }

    /// The decision's JSON object with the fetch's keys added, and first `"type":"item"` (the last
    /// line says `"type":"usage"`: a script reads each line's type, and never has to know which
    /// line is which by its shape).
    private func line(_ decision: Decision, extra: [(String, Any?)]) -> String {
        var members: [(key: String, value: JSONValue)] = [("type", JSONValue(.string("item")))]
        members += decision.jsonMembers
        for (key, value) in extra {
            switch value {
            case let text as String: members.append((key, JSONValue(.string(text))))
            case let number as Int: members.append((key, JSONValue(.number(String(number)))))
            case let number as Double: members.append((key, JSONValue(.number(String(number)))))
            case let json as JSONValue: members.append((key, json))
            default: members.append((key, JSONValue(.null)))
            }
        }
        return JSONWriter.compactText(of: JSONValue(.object(members))) + "\n"
    }
}
