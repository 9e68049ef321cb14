import Policy
import Testing
import Support

struct JSONParserTests {
    @Test func parsesEveryKindAndKeepsLines() throws {
        let value = try JSONParser().parse("{\n\"a\": [1, -2.5e3, true, false, null],\n\"b\": \"x\\u00e9\\ud83d\\ude00\\n\"\n}")
        guard case .object(let members) = value.kind else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members[0].value.line == 2)
        #expect(members[1].value.line == 3)
        #expect(members[0].value == JSONValue(.array([JSONValue(.number("1")), JSONValue(.number("-2.5e3")), JSONValue(.bool(true)),
                                                      JSONValue(.bool(false)), JSONValue(.null)])))
        #expect(members[1].value.kind == .string("xé😀\n"))
    }

    @Test(arguments: [
        ("", "the file is empty"), ("  \n ", "no JSON value"), ("{", "unexpected end of input inside an object"),
        ("[1,]", "expected a value"), ("{\"a\" 1}", "expected ':'"), ("{\"a\":1,\"a\":2}", "duplicate key \"a\""),
        ("01", "leading zero"), ("1.", "no digit after '.'"), ("\"\\x\"", "invalid escape"), ("\"\\ud800\"", "unpaired surrogate"),
        ("tru", "invalid literal"), ("[] []", "after the end of the JSON value"), ("\"a\nb\"", "not closed before the end of the line"),
    ])
    func rejects(_ input: String, _ message: String) {
        #expect { try JSONParser().parse(input) } throws: { error in
            (error as? JSONParser.SyntaxError)?.message.contains(message) ?? false
        }
    }

    /// Duplicates are found by a scan in small objects and by a set from 16 members on: both ways.
    @Test(arguments: [1, 15, 16, 17, 40])
    func rejectsADuplicateKeyAfterManyMembers(_ count: Int) throws {
        let members = (0..<count).map { "\"k\($0)\": \($0)" }
        let unique = try JSONParser().parse("{" + members.joined(separator: ",") + "}")
        guard case .object(let parsed) = unique.kind else { Issue.record("not an object"); return }
        #expect(parsed.map(\.key) == (0..<count).map { "k\($0)" })
        for repeated in Set([0, count / 2, count - 1]) {
            #expect { try JSONParser().parse("{" + (members + ["\"k\(repeated)\": 0"]).joined(separator: ",") + "}") } throws: { error in
                (error as? JSONParser.SyntaxError)?.message.contains("duplicate key \"k\(repeated)\"") ?? false
            }
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser().parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func reportsTheLineOfTheError() {
        #expect(throws: JSONParser.SyntaxError(line: 3, message: "unexpected '}', expected a value")) {
            try JSONParser().parse("{\n\"a\":\n}")
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 10_000_000)
        #expect(throws: JSONParser.SyntaxError(line: 1, message: "nesting deeper than 64 levels")) { try JSONParser().parse(deep) }
    }

    @Test func writerRoundTrips() throws {
        let text = "{\n  \"a\": [\n    1.50,\n    \"q\\\"\\u0001\"\n  ],\n  \"b\": {}\n}\n"
        let value = try JSONParser().parse(text)
        #expect(JSONWriter.text(of: value) == text)
        #expect(try JSONParser().parse(JSONWriter.compactText(of: value)) == value)
    }
}
