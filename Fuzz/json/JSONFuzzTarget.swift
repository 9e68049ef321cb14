// libFuzzer target: the JSON parser every item, policy and settings file goes through.
// Built and run by scripts/fuzz.sh.
//
// Beyond "never traps", it checks what the parser promises: a document it accepts is written
// back by JSONWriter (pretty and compact) as text that parses to an equal value, and a syntax
// error's message (printed to a terminal) holds no control character from the input.
@testable import Support

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let value: JSONValue
    do {
        value = try JSONParser().parse(bytes)
    } catch {
        precondition(error.line >= 1, "a syntax error names no line")
        precondition(!error.message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                     "a syntax error's message holds a control character: \(error.message.debugDescription)")
        return 0
    }
    _ = value.hashValue
    for text in [JSONWriter.text(of: value), JSONWriter.compactText(of: value)] {
        guard let again = try? JSONParser().parse(text) else {
            preconditionFailure("JSONWriter wrote text the parser refuses: \(text)")
        }
        precondition(again == value, "the written text parses to another value: \(text)")
    }
    return 0
}
