import Foundation
@testable import Policy
import Testing
import TestSupport
import Support

/// What the fuzz targets of the Policy module found (Fuzz/, scripts/fuzz.sh), kept as tests, and
/// their seed corpora replayed on every test run.
struct FuzzRegressionTests {
    /// Found by the `json` target's message check: a syntax error quoted a key or an escape from
    /// the file raw, so a file could put escape sequences (`ESC ]0;title BEL`, `ESC [2J`) or a line
    /// break into the one-line message printed on a terminal. Control characters now come out
    /// escaped, as in JSON.
    @Test(arguments: [
        (#"{"\u001b[2J": 1, "\u001b[2J": 2}"#, #"duplicate key "\u001b[2J""#),
        ("{\"\\u009b31m\" 1}", #"expected ':' after the key "\u009b31m""#),
        ("[\"\\\u{1B}]0;pwned\u{07}\"]", "invalid escape: a backslash followed by byte 0x1B in a string"),
        ("[\"\\\n\"]", "invalid escape: a backslash followed by byte 0xA in a string"),
    ])
    func aSyntaxErrorQuotesNoControlCharacter(_ input: String, _ message: String) {
        #expect { try JSONParser().parse(input) } throws: { error in
            (error as? JSONParser.SyntaxError)?.message == message
        }
    }

    /// The same for a key the file may not have (found with the same check on item files).
    @Test func anUnknownKeyIsQuotedEscaped() {
        let json = #"{"original": "https://example.com/a.png", "\u001b]0;pwned\u0007": 1}"#
        #expect { try ImageItem.items(fromJSON: Array(json.utf8), source: "x.json") } throws: { error in
            (error as? DataFileError)?.message.hasPrefix(#"unknown key "\u001b]0;pwned\u0007" (expected"#) ?? false
        }
    }

    /// JSONWriter escapes the C1 controls too (U+0080–U+009F, CSI among them), and what it writes
    /// still reads back as the same value.
    @Test func theWriterEscapesC1Controls() throws {
        let value = JSONValue(.object([("k\u{9B}", JSONValue(.string("\u{85}x\u{7F}")))]))
        let text = JSONWriter.compactText(of: value)
        #expect(text == #"{"k\u009b":"\u0085x\u007f"}"#)
        #expect(try JSONParser().parse(text) == value)
    }

    /// Every file of the JSON corpus: accepted documents are written back as text that reads back
    /// equal; refused ones get a message without control characters.
    @Test func theJSONCorpusRoundTrips() throws {
        let files = try corpus("json")
        #expect(files.count >= 10)
        for (name, bytes) in files {
            do {
                let value = try JSONParser().parse(bytes)
                #expect(try JSONParser().parse(JSONWriter.text(of: value)) == value, "\(name)")
                #expect(try JSONParser().parse(JSONWriter.compactText(of: value)) == value, "\(name)")
            } catch {
                #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(name)")
            }
        }
    }

    /// Every file of the item and policy corpora loads or is refused with an error naming the
    /// source; the bundled policies among them load and pass their own cases.
    @Test func theItemAndPolicyCorporaLoadOrAreRefused() throws {
        for (name, bytes) in try corpus("item") {
            do {
                #expect(try !ImageItem.items(fromJSON: bytes, source: name).isEmpty)
            } catch {
                #expect(error.source == name)
            }
        }
        var loaded = 0
        for (name, bytes) in try corpus("policy") {
            do {
                let policy = try ImagePolicy(json: bytes, name: name, source: name)
                #expect(policy.truthTable().allSatisfy { policy.rules.indices.contains($0.outcome.ruleIndex) })
                if policy.failingCases().isEmpty { loaded += 1 }
            } catch {
                #expect(error.source == name)
            }
        }
        #expect(loaded >= 4)
    }

    /// Every file of the settings corpus reads as a store, or is refused; one that reads keeps its
    /// other values when a key is set.
    @Test func theSettingsCorpusReadsAndRewrites() throws {
        let folder = TemporaryFolder()
        for (name, bytes) in try corpus("settings") {
            let path = try folder.write(Data(bytes), to: name)
            let store = FileSettingsStore(path: path)
            guard let before = try? store.storedValues() else { continue }
            try store.set(.bool(true), forKey: "fuzz-added")
            let after = try FileSettingsStore(path: path).storedValues()
            #expect(after.filter { $0.key != "fuzz-added" } == before.filter { $0.key != "fuzz-added" }, "\(name)")
        }
    }

    /// The files of `Fuzz/<target>/corpus`, by name.
    func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = PackagePaths.root + "/Fuzz/" + target + "/corpus"
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { name in
            (name, try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))))
        }
    }
}
