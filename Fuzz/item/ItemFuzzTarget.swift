// libFuzzer target: reading items (`--item FILE`) from JSON bytes. Built and run by scripts/fuzz.sh.
//
// Every input either gives items whose URLs are valid image URLs, or a DataFileError naming the
// source; nothing traps. Reading the same bytes from a file (ImageItem.load) gives the same items.
import Policy

private let file = FuzzInputFile(named: "items.json")

@_cdecl("LLVMFuzzerTestOneInput")
public func itemFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    do {
        let items = try ImageItem.items(fromJSON: bytes, source: "fuzz.json")
        precondition(!items.isEmpty, "an accepted file holds no item")
        file.write(data, count)
        precondition((try? ImageItem.load(contentsOf: file.path)) == items, "the file reads otherwise than its bytes")
        for item in items {
            precondition(ImageURL.problem(with: item.original.absoluteString) == nil)
            if let thumbnail = item.thumbnail { precondition(ImageURL(thumbnail.absoluteString) == thumbnail) }
            _ = item.hashValue
        }
    } catch {
        precondition(error.source == "fuzz.json")
        _ = error.description
    }
    return 0
}
