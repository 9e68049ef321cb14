// libFuzzer target: a settings file (`--settings FILE`, `~/.config/imgpolicy/settings.json`) as
// FileSettingsStore reads and rewrites it. Built and run by scripts/fuzz.sh.
//
// The input is written to a file (in /dev/shm when there is one, so that the store's fsync
// costs little); the store reads every value, then sets one key, which rewrites the file, and
// reads it back: the other keys must keep their values.
#if canImport(Glibc)
import Glibc
#endif
import Policy

private let folder: String = {
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var template = Array("\(base)/imgpolicy-fuzz-settings-XXXXXX".utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        fatalError("cannot create a folder in \(base)")
    }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func settingsFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let path = folder + "/settings.json"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(path)") }
    var written = 0
    while written < count, let data {
        let n = write(fd, data + written, count - written)
        guard n > 0 else { fatalError("cannot write \(path)") }
        written += n
    }
    close(fd)

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
