@testable import Policy
import Testing
import Support

/// File names as bytes, shown with `\xHH` for every byte that is not part of valid UTF-8.
struct PathBytesTests {
    @Test(arguments: [
        ([0x6E, 0xFF, 0x2E, 0x6A], #"n\xFF.j"#),
        (Array("café/日本".utf8), "café/日本"),
        ([0xC0, 0x80], #"\xC0\x80"#),                 // an overlong NUL
        ([0xED, 0xA0, 0x80], #"\xED\xA0\x80"#),       // a UTF-16 surrogate
        ([0xE6, 0x97], #"\xE6\x97"#),                 // a sequence cut short
        ([0x61, 0xF0, 0x9F, 0x98, 0x80, 0xF0], "a😀\\xF0"),
        ([], ""),
    ] as [([UInt8], String)])
    func displayed(_ bytes: [UInt8], _ text: String) {
        #expect(PathBytes.displayed(bytes) == text)
        #expect(PathBytes.isUTF8(bytes) == !text.contains(#"\x"#))
    }
}
