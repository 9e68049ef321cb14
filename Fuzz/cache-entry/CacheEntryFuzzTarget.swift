// libFuzzer target: a disk-cache entry file as the cache parses it on every read
// (`DiskCache.body(of:for:)`). Built and run by scripts/fuzz.sh.
//
// The entry is checked against a fixed URL (the seed corpus holds real entries for it) and
// against the URL its own header names, when that is a valid image URL; a body it returns lies
// inside the file.
@testable import Caching
import Policy

private let fixedURL = ImageURL("http://127.0.0.1:8080/fuzz.png")!

@_cdecl("LLVMFuzzerTestOneInput")
public func cacheEntryFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let file = Array(UnsafeBufferPointer(start: data, count: count))
    if let body = DiskCache.body(of: file, for: fixedURL) {
        precondition(body.count < file.count)
    }
    // The header's URL: magic (8), body length (8), checksum (16), URL length (4), then the URL.
    if file.count >= 36 {
        let length = Int(file[32]) | Int(file[33]) << 8 | Int(file[34]) << 16 | Int(file[35]) << 24
        if length <= file.count - 36,
           let text = String(validating: file[36..<36 + length], as: UTF8.self),
           let url = ImageURL(text),
           let body = DiskCache.body(of: file, for: url) {
            precondition(body.count < file.count)
        }
    }
    return 0
}
