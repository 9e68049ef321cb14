// Shared by the fuzz targets that read files (compiled into each target by scripts/fuzz.sh).
#if canImport(Glibc)
import Glibc
#endif

/// A file in a private folder (in /dev/shm when there is one, so that writes and fsyncs cost
/// little) that a target rewrites with each input before reading it through the library.
struct FuzzInputFile {
    let path: String

    /// A fresh private folder holding the file `name`.
    init(named name: String) {
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/imgpolicy-fuzz-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            fatalError("cannot create a folder in \(base)")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + name
    }

    /// Replaces the file's content with `count` bytes at `data`.
    func write(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("cannot write \(path)") }
        var written = 0
        while written < count, let data {
            let n = Glibc.write(fd, data + written, count - written)
            guard n > 0 else { fatalError("cannot write \(path)") }
            written += n
        }
        close(fd)
    }
}
