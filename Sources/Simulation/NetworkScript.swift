import Policy
import Support

/// `--network-script`: the network states a simulation goes through, each from a time on, as
/// `STATE@TIME` entries separated by commas: `cellular@0s,wifi@10s,offline@20s`.
///
/// A state is written as `IMGPOLICY_NETWORK` writes it, flags included (`cellular,roaming@0s`):
/// the commas inside a state are told apart from those between entries because only an entry
/// ends with `@TIME`. A time is a decimal number of seconds (`10s`, `2.5s`) or milliseconds
/// (`500ms`). The first entry is at 0; each later one is strictly later than the one before, and
/// no later than `NetworkScript.longest`.
package struct NetworkScript: Sendable, Equatable {
    /// One state and the time it starts at.
    package struct Entry: Sendable, Equatable {
        var state: NetworkState
        /// Seconds from the start of the run.
        var time: Double
    }

    /// The entries, in time order; the first at time 0.
    package var entries: [Entry]

    /// The latest time an entry may have: one hour.
    package static let longest: Double = 3600

    /// What is wrong with a script, in one line (the command adds the flag's name).
    package struct Problem: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// Parses `text`.
    /// - Throws: `Problem` naming the entry that is wrong and why.
    package init(parsing text: String) throws(Problem) {
        var entries: [Entry] = []
        var pending: [Substring] = []
        for token in text.split(separator: ",", omittingEmptySubsequences: false) {
            pending.append(token)
            guard token.contains("@") else { continue }
            let written = pending.joined(separator: ",")
            pending = []
            guard let at = written.lastIndex(of: "@") else { continue }
            let stateText = String(written[..<at]), timeText = String(written[written.index(after: at)...])
            guard let state = NetworkState(parsing: stateText) else {
                throw Problem(description: "\"\(written)\": \"\(stateText)\" is not a network state (wifi, cellular, wired, offline or unknown, optionally followed by ,expensive ,constrained ,roaming ,captive)")
            }
            if let unbounded = Self.seconds(timeText, upTo: .infinity), unbounded > Self.longest {
                throw Problem(description: "\"\(written)\": \"\(timeText)\" is later than the longest script, \(Int(Self.longest)) s")
            }
            guard let time = Self.seconds(timeText) else {
                throw Problem(description: "\"\(written)\": \"\(timeText)\" is not a time (seconds such as 10s or 2.5s, or milliseconds such as 500ms)")
            }
            if let last = entries.last, time <= last.time {
                throw Problem(description: "\"\(written)\": times must increase (the entry before is at \(Self.format(last.time)))")
            }
            if entries.isEmpty && time != 0 {
                throw Problem(description: "\"\(written)\": the first entry must be at 0s (the state the run starts in)")
            }
            entries.append(Entry(state: state, time: time))
        }
        if !pending.isEmpty {
            throw Problem(description: "\"\(pending.joined(separator: ","))\": every entry needs a time (STATE@TIME, e.g. wifi@10s)")
        }
        guard !entries.isEmpty else { throw Problem(description: "the script is empty (e.g. cellular@0s,wifi@10s)") }
        self.entries = entries
    }

    package init(entries: [Entry]) {
        self.entries = entries
    }

    /// The state at `time` seconds from the start.
    package func state(at time: Double) -> NetworkState {
        var current = entries[0].state
        for entry in entries where entry.time <= time { current = entry.state }
        return current
    }

    /// The time of the last change.
    package var lastChange: Double { entries.last?.time ?? 0 }

    /// `cellular@0s,wifi@25s`.
    package var description: String {
        entries.map { "\($0.state)@\(Self.format($0.time))" }.joined(separator: ",")
    }

    /// Seconds from `10s`, `2.5s`, `500ms`; nil for anything else, a negative or non-finite value,
    /// or one beyond `longest`.
    package static func seconds(_ text: String, upTo limit: Double = longest) -> Double? {
        let (number, scale): (Substring, Double)
        if text.hasSuffix("ms") {
            (number, scale) = (text.dropLast(2), 0.001)
        } else if text.hasSuffix("s") {
            (number, scale) = (text.dropLast(), 1)
        } else {
            return nil
        }
        // Digits and at most one point: no signs, exponents, "inf" or "nan".
        guard !number.isEmpty, number.count <= 12, number.filter({ $0 == "." }).count <= 1,
              number.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }), number != ".",
              let value = Double(number) else { return nil }
        let seconds = value * scale
        return seconds <= limit ? seconds : nil
    }

    package static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(Int((seconds * 1000).rounded()))ms"
    }
}
