// libFuzzer target: a settings file (`--settings FILE`, `~/.config/imgpolicy/settings.json`) as
// FileSettingsStore reads and rewrites it. Built and run by scripts/fuzz.sh.
//
// The input is written to a file (FuzzInputFile); the store reads every value, then sets one
// key, which rewrites the file, and reads it back: the other keys must keep their values.
import Policy

private let file = FuzzInputFile(named: "settings.json")

@_cdecl("LLVMFuzzerTestOneInput")
public func settingsFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    file.write(data, count)
    let path = file.path
    let store = FileSettingsStore(path: path)
    let before: [String: SettingValue]
    do {
        before = try store.storedValues()
    } catch {
        _ = error.description
        return 0
    }
    for (key, value) in before {
        _ = value.typeDescription
        _ = try? store.bool(forKey: key)
        _ = store.sourceLine(forKey: key)
    }
    do {
        try store.set(.bool(true), forKey: "fuzz-added")
        let after = try FileSettingsStore(path: path).storedValues()
        for (key, value) in before where key != "fuzz-added" {
            precondition(after[key] == value, "\"\(key)\" changed from \(value) to \(after[key].map { "\($0)" } ?? "nothing")")
        }
        precondition(after["fuzz-added"] == .bool(true))
    } catch {
        fatalError("rewriting a settings file that read fine failed: \(error)")
    }
    return 0
}
