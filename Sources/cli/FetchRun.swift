import Fetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Policy

/// Carries out decisions for `imgpolicy --fetch`: all items at once, with progress on a terminal,
/// one line per item in item order, and the failure to exit with.
///
/// Loads go through an `ImageLoader` over the run's one network state and settings, so that a
/// "show cached" decision whose cached copy proves unreadable (another process cleared or evicted
/// it meanwhile) is made again instead of failing as offline. After every item, the disk writes
/// are flushed; each distinct failed write is reported on one line and the run exits 74.
struct FetchRun {
    let loader: ImageLoader
    let json: Bool
    /// What the run's loads cost: the summary line, and the ledger in the cache folder.
    let usage = DataUsageRecorder()

    var pipeline: ImagePipeline { loader.pipeline }

    /// A run over `pipeline` that decides again, when it must, with `policy`, the network state
    /// read once for the run and the resolved settings (with the command's `--set` overrides).
    init(pipeline: ImagePipeline, json: Bool, policy: ImagePolicy, network: NetworkState, settings: ResolvedSettings,
         logger: Logger) {
        var values: [String: SettingValue] = [:]
        for (position, declaration) in policy.settings.enumerated() {
            values[declaration.key] = .bool(settings.isOn(at: position))
        }
        loader = ImageLoader(policy: policy, reachability: FixedReachability(network),
                             settings: InMemorySettingsStore(values), pipeline: pipeline, usage: usage, logger: logger)
        self.json = json
    }

    struct Results {
        var lines: [String] = []
        var images: [FetchedImage?] = []
        var failure: CommandFailure?
        /// The usage summary line (`usage: …`, or `{"usage":{…}}` with `--json`).
        var usage = ""
    }

    func run(items: [ImageItem], decisions: [Decision]) async -> Results {
        let events = await load(items, decisions: decisions)
        var results = Results()
        for (index, item) in items.enumerated() {
            guard let (event, elapsed) = events[index] else { continue }
            let prefix = item.id.map { "\($0): " } ?? ""
            let time = milliseconds(elapsed)
            switch event {
            case .placeholder(let decision):
                results.lines.append(json ? line(decision, extra: [("source", nil), ("bytes", 0), ("ms", time)])
                                          : TerminalText.escaped("\(prefix)placeholder (rule \(decision.rule): \(decision.reason))") + "\n")
                results.images.append(nil)
            case .imageReady(let decision, let variant, let image):
                results.lines.append(json
                    ? line(decision, extra: [("source", image.source.rawValue), ("bytes", image.bytes.count), ("ms", time)])
                    : TerminalText.escaped("\(prefix)\(decision.action.kind) \(variant) from \(image.source), \(image.bytes.count) bytes, \(time) ms (rule \(decision.rule))") + "\n")
                results.images.append(image)
            case .failed(let decision, let error, let fallback):
                let shown = fallback.map { "the cached thumbnail (\($0.bytes.count) bytes)" } ?? "the placeholder"
                results.lines.append(json
                    ? line(decision, extra: [("source", nil), ("bytes", 0), ("ms", time), ("error", error.description)])
                    : TerminalText.escaped("\(prefix)\(decision.action.kind) \(decision.variant.map { "\($0)" } ?? "") failed, showing \(shown): \(error)") + "\n")
                results.images.append(nil)
                let failure = CommandFailure(error.description, status: error.isRemote ? .unavailable : .ioError)
                FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped(failure.message))\n".utf8))
                if results.failure == nil || failure.status == .ioError { results.failure = failure }
            case .decisionFailed(let error):
                results.lines.append(TerminalText.escaped("\(prefix)\(error)") + "\n")
                results.images.append(nil)
                results.failure = CommandFailure(error)
            }
        }
        await pipeline.flush()
        for (error, occurrences) in pipeline.diskWriteFailures {
            let more = occurrences > 1 ? " (and \(occurrences - 1) more cache writes failed so)" : ""
            FileHandle.standardError.write(Data("imgpolicy: \(TerminalText.escaped("\(error)\(more)"))\n".utf8))
            results.failure = CommandFailure("", status: .ioError)
        }
        results.usage = recordUsage(failure: &results.failure)
        if let failure = results.failure {
            // Each failure was already reported on its own line; exit with the status only.
            results.failure = CommandFailure("", status: failure.status)
        }
        return results
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
        if json { return JSONWriter.compactText(of: JSONValue(.object([("usage", current.outputJSON(perOriginal: perOriginal))]))) + "\n" }
        return TerminalText.escaped("usage: " + current.summaryText(perOriginal: perOriginal)) + "\n"
    }

    /// Loads every item at once, each through a slot of its own as an app would; the events
    /// arrive on the main actor, where they are collected with each load's duration.
    private func load(_ items: [ImageItem], decisions: [Decision]) async -> [(SlotEvent, Duration)?] {
        let collected = await EventList(count: items.count)
        var tasks: [Task<Void, Never>] = []
        for (index, item) in items.enumerated() {
            let start = ContinuousClock.now
            let slot = ImageSlot(loader: loader) { event in
                collected.add(event, elapsed: ContinuousClock.now - start, at: index)
            }
            tasks.append(slot.load(item, decision: decisions[index]))
        }
        for task in tasks { await task.value }
        return await collected.finish()
    }

    private func milliseconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (value * 10).rounded() / 10
    }

    /// The decision's JSON object with the fetch's keys added.
    private func line(_ decision: Decision, extra: [(String, Any?)]) -> String {
        var members = decision.jsonMembers
        for (key, value) in extra {
            switch value {
            case let text as String: members.append((key, JSONValue(.string(text))))
            case let number as Int: members.append((key, JSONValue(.number(String(number)))))
            case let number as Double: members.append((key, JSONValue(.number(String(number)))))
            default: members.append((key, JSONValue(.null)))
            }
        }
        return JSONWriter.compactText(of: JSONValue(.object(members))) + "\n"
    }
}

/// The events of a run, in item order, with `[done/total]` on standard error while they arrive
/// (only when it is a terminal and there is more than one item). Main-actor state: no lock.
@MainActor
final class EventList {
    private var events: [(SlotEvent, Duration)?]
    private var done = 0
    private let visible: Bool

    init(count: Int) {
        events = Array(repeating: nil, count: count)
        visible = count > 1 && isatty(2) != 0
    }

    func add(_ event: SlotEvent, elapsed: Duration, at index: Int) {
        events[index] = (event, elapsed)
        done += 1
        if visible { FileHandle.standardError.write(Data("\rloading \(done)/\(events.count)".utf8)) }
    }

    func finish() -> [(SlotEvent, Duration)?] {
        if visible { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        return events
    }
}
