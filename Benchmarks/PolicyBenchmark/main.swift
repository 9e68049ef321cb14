// Nanoseconds per decision: the default policy loaded from policies/default.json and compiled,
// against a hand-written Swift if/else of the same tree, measured side by side in one run.
//
//     swift run -c release policy-benchmark [path/to/default.json]
import Policy

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tree of seed 004 written by hand: rule index and action, as the compiled table returns.
@inline(never)
func handWritten(_ input: PolicyInput) -> (rule: Int, action: RuleAction) {
    if input.cached.contains(.original) { return (0, .showCached(.original)) }
    switch input.network.kind {
    case .wifi, .wired:
        return (1, .load(.original))
    case .cellular, .unknown:
        if input.settings.isOn(at: 0) { return (2, .load(.original)) }
        if input.hasThumbnail { return (3, .load(.thumbnail)) }
        return (4, .load(.original))
    case .offline:
        if input.hasThumbnail && input.cached.contains(.thumbnail) { return (5, .showCached(.thumbnail)) }
        return (6, .placeholder)
    }
}

@inline(never)
func compiled(_ policy: ImagePolicy, _ input: PolicyInput) -> (rule: Int, action: RuleAction) {
    let outcome = policy.outcome(for: input)
    return (outcome.ruleIndex, outcome.action)
}

/// Writes a line to standard error.
func printError(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// `value` with two decimals.
func twoDecimals(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

/// Nanoseconds per call of `decide` over `inputs`, `rounds` times, and a checksum of the results.
/// Generic, so that each decider gets its own specialised loop with no closure in it.
@inline(never)
func measure<D: Decider>(_ decider: D, _ inputs: [PolicyInput], rounds: Int) -> (Double, Int) {
    var checksum = 0
    let start = ContinuousClock.now
    for _ in 0..<rounds {
        for input in inputs {
            let result = decider.decide(input)
            checksum &+= result.rule &+ (result.action.variant == .thumbnail ? 7 : 0)
        }
    }
    let elapsed = ContinuousClock.now - start
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return (nanoseconds / Double(rounds * inputs.count), checksum)
}

protocol Decider {
    func decide(_ input: PolicyInput) -> (rule: Int, action: RuleAction)
}

struct HandWritten: Decider {
    func decide(_ input: PolicyInput) -> (rule: Int, action: RuleAction) { handWritten(input) }
}

struct Compiled: Decider {
    let policy: ImagePolicy
    func decide(_ input: PolicyInput) -> (rule: Int, action: RuleAction) { compiled(policy, input) }
}

/// Loads the policy, checks it against the hand-written tree, and measures both. Kept in a
/// function: top-level globals would add their own access cost to every call.
func run() {
    let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "policies/default.json"
    let policy: ImagePolicy
    do {
        policy = try ImagePolicy.load(contentsOf: path)
    } catch {
        printError("policy-benchmark: \(error)")
        exit(66)
    }

    // Every feasible input, checked for agreement first: a fast wrong answer is worth nothing.
    let all = policy.truthTable().map(\.input)
    for input in all where handWritten(input) != compiled(policy, input) {
        printError("policy-benchmark: the hand-written tree and \(path) disagree on \(input)")
        exit(1)
    }

    var generator = SystemRandomNumberGenerator()
    let mixed = (0..<4096).map { _ in all.randomElement(using: &generator)! }
    let repeated = [PolicyInput](repeating: PolicyInput(network: NetworkState(.cellular), cached: [], hasThumbnail: true,
                                                        settings: policy.defaultSettings), count: 4096)
    let rounds = 5_000  // 20 million decisions per measurement

    print("policy-benchmark: \(path), \(all.count) inputs agree; \(rounds * 4096) decisions per measurement, best of 5")
    for (label, inputs) in [("random mix of all inputs", mixed), ("one input repeated", repeated)] {
        var best = (table: Double.infinity, hand: Double.infinity)
        var sums = (0, 0)
        for _ in 0..<5 {
            let table = measure(Compiled(policy: policy), inputs, rounds: rounds)
            let hand = measure(HandWritten(), inputs, rounds: rounds)
            best = (min(best.table, table.0), min(best.hand, hand.0))
            sums = (table.1, hand.1)
        }
        precondition(sums.0 == sums.1, "checksums differ")
        let ratio = best.table / best.hand
        print("  \(label):")
        print("    compiled policy (default.json): \(twoDecimals(best.table)) ns/decision")
        print("    hand-written if/else:           \(twoDecimals(best.hand)) ns/decision")
        print("    ratio compiled / hand-written:  \(twoDecimals(ratio))  (goal: at most 2)")
    }
}

run()
