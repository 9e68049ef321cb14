// libFuzzer target: recognising an image by its first bytes (every response body goes through
// it) and describing a body that is not an image. Built and run by scripts/fuzz.sh.
@testable import HTTPSemantics

@_cdecl("LLVMFuzzerTestOneInput")
public func sniffFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let format = ImageFormat.sniff(bytes)
    // Only the head counts: what follows the first 1024 bytes never changes the answer.
    if bytes.count > 1024 { precondition(ImageFormat.sniff(bytes.prefix(1024)) == format) }
    let description = ImageFormat.describeStart(bytes)
    precondition(!description.isEmpty)
    return 0
}
