import Foundation
import Policy
import Testing

struct ImageItemTests {
    @Test func readsOneObjectOrAnArray() throws {
        let one = try ImageItem.items(fromJSON: Array(#"{"id": "a", "original": "https://x.example/o.jpg", "thumbnail": "http://x.example/t.jpg"}"#.utf8), source: "i.json")
        #expect(one == [ImageItem(id: "a", original: ImageURL("https://x.example/o.jpg")!, thumbnail: ImageURL("http://x.example/t.jpg")!)])
        let many = try ImageItem.items(fromJSON: Array(#"[{"original": "https://x.example/1"}, {"id": 7, "original": "https://x.example/2", "thumbnail": null}]"#.utf8), source: "i.json")
        #expect(many.count == 2)
        #expect(many[1].id == "7")
        #expect(many[1].thumbnail == nil)
    }

    @Test(arguments: [
        (#"{"id": "a"}"#, #"i.json: line 1: "original" is missing"#),
        ("{\n\"original\":\n  3}", #"i.json: line 3: "original" must be a string, found a number"#),
        (#"{"original": "https://x/o", "thumbnial": "https://x/t"}"#, #"unknown key "thumbnial""#),
        (#"[{"original": "https://x/o"}, {"original": "ftp://x/o"}]"#, #"i.json: line 1: item 2: "original": scheme "ftp" is not allowed"#),
        (#"{"original": "file:///etc/passwd"}"#, #"scheme "file" is not allowed"#),
        (#"{"original": "javascript:alert(1)"}"#, #"scheme "javascript" is not allowed"#),
        (#"{"original": "//x.example/o.jpg"}"#, "is not an absolute URL"),
        (#"{"original": "images/o.jpg"}"#, "is not an absolute URL"),
        (#"{"original": "https:///o.jpg"}"#, "has no host"),
        (#"{"original": "https://x.example/a b.jpg"}"#, "white space"),
        // Each kind the ASCII fast path and the Unicode path must catch: a tab (JSON escape), a
        // DEL, a no-break space and an ideographic space (not ASCII), a control after non-ASCII.
        (#"{"original": "https://x.example/a\tb.jpg"}"#, "white space"),
        ("{\"original\": \"https://x.example/a\u{7F}b.jpg\"}", "control characters"),
        ("{\"original\": \"https://x.example/a\u{A0}b.jpg\"}", "white space"),
        ("{\"original\": \"https://x.example/\u{E9}\u{3000}.jpg\"}", "white space"),
        (#"{"original": "https://x.example/\u00e9\u0001.jpg"}"#, "control characters"),
        // A C1 control, a right-to-left override and a zero-width space: invisible or misleading
        // when the URL is printed.
        (#"{"original": "https://x.example/a\u009bb.jpg"}"#, "control characters"),
        (#"{"original": "https://x.example/gpj.\u202eexe"}"#, "invisible format characters"),
        (#"{"original": "https://x.example/a\u200bb.jpg"}"#, "invisible format characters"),
        (#"{"original": "https://x/o", "id": true}"#, #""id" must be a string or an integer"#),
        ("[]", "the array holds no item"),
        ("\"https://x/o\"", "expected an item object or an array of items, found a string"),
        ("{\n\"original\": \"https://a.example/o\",\n\"thumbnail\": \"https://u:secret@a.example/t\"}",
         #"i.json: line 3: "thumbnail": the URL holds user information (user:password@ before the host): credentials in URLs are not accepted"#),
        (#"[{"original": "https://a.example/o"}, {"original": "https://a.example:99999/o"}]"#,
         #"i.json: line 1: item 2: "original": the port "99999" is not a number from 1 to 65535"#),
        (#"{"original": "https://exämple.com/o"}"#, #""original": the host "exämple.com" is not ASCII"#),
    ])
    func rejects(_ json: String, _ message: String) {
        do {
            _ = try ImageItem.items(fromJSON: Array(json.utf8), source: "i.json")
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.description.contains(message), "got: \(error.description)")
        }
    }

    @Test(arguments: ["http://a", "HTTPS://A.example:8443/x?y#z", "https://[::1]:8080/i.png", "https://xn--bcher-kva.example/p",
                      "https://a.example/caf\u{E9}.jpg"])
    func acceptsURL(_ text: String) {
        #expect(ImageURL(text) != nil)
    }
}

/// Files too large to be data files are refused by their size, before any byte is read.
struct LargeDataFileTests {
    @Test func aHugeSparseItemFileIsRefusedNamingTheFileAndTheLimit() throws {
        let path = FileManager.default.temporaryDirectory.path + "/imgpolicy-huge-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("[".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(truncate(path, 1 << 40) == 0)   // 1 TiB, sparse: without the limit, reading it would never end
        let readBefore = Self.bytesReadByThisThread()
        #expect {
            _ = try ImageItem.load(contentsOf: path)
        } throws: { error in
            guard let error = error as? DataFileError else { return false }
            return error.description.contains(path) && error.description.contains("larger than 64 MiB")
        }
        // Refused by its size: not a byte of it read (reading up to the limit first read 64 MiB).
        // The count is this thread's own (`rchar`), so tests running beside it do not add to it.
        if let before = readBefore, let after = Self.bytesReadByThisThread() {
            #expect(after - before < 1 << 20, "read \(after - before) bytes")
        }
    }

    /// The bytes this thread has read so far (`rchar` in /proc/thread-self/io), nil where unreadable.
    static func bytesReadByThisThread() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rchar:") }) else { return nil }
        return Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
    }
}
