// libFuzzer target: reading, validating and compiling a policy file, then deciding with it.
// Built and run by scripts/fuzz.sh.
//
// A policy that loads must decide every input it can see (its truth table), explain any of them,
// and check its own cases, without trapping; read from a file (ImagePolicy.load) it is the same.
import Policy

private let file = FuzzInputFile(named: "fuzz.json")

private let item = ImageItem(id: "fuzz", original: ImageURL("https://example.com/o.png")!,
                             thumbnail: ImageURL("https://example.com/t.png"))
private let bare = ImageItem(id: "fuzz", original: ImageURL("https://example.com/o.png")!)

@_cdecl("LLVMFuzzerTestOneInput")
public func policyFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    let policy: ImagePolicy
    do {
        policy = try ImagePolicy(json: bytes, name: "fuzz", source: "fuzz.json")
    } catch {
        _ = error.description
        return 0
    }
    file.write(data, count)
    guard let fromFile = try? ImagePolicy.load(contentsOf: file.path), fromFile.rules == policy.rules else {
        preconditionFailure("the file reads otherwise than its bytes")
    }
    for (input, outcome) in policy.truthTable() {
        precondition(policy.rules.indices.contains(outcome.ruleIndex))
        _ = policy.explain(input)
        let decision = policy.decide(input.hasThumbnail ? item : bare, network: input.network,
                                     settings: input.settings, cached: input.cached)
        _ = decision.rule
    }
    _ = policy.failingCases().map(\.description)
    _ = policy.resolveSettings(["fuzz": true])
    return 0
}
