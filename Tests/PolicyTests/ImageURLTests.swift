import Policy
import Testing

/// What `ImageURL` accepts: only what can be fetched and cached, refused where it is read.
struct ImageURLTests {
    @Test(arguments: [
        "http://a", "https://A.Example.COM/x.jpg", "https://img.example:1/x", "https://img.example:65535/x",
        "https://127.0.0.1:8080/x", "http://[::1]/x", "http://[2001:db8::1]:443/x", "https://xn--bcher-kva.example/b.png",
        "https://a-b.c-d.example/x?q=1", "https://9gag.example/x", "https://localhost?x", "https://h",
        "https://img.example./x", "http://1.2.3.4./x", "https://0xcafe.example/x", "https://cdn.0x7f.example/x",
    ])
    func accepts(_ text: String) {
        #expect(ImageURL.problem(with: text) == nil, "\(ImageURL.problem(with: text) ?? "")")
        #expect(ImageURL(text)?.absoluteString == text.lowercased())
    }

    /// Two spellings of one resource are one URL: one cache entry, one download.
    @Test(arguments: [
        ("HTTPS://Img.Example.COM/A.JPG?Q=1", "https://img.example.com/A.JPG?Q=1"),
        ("http://img.example:80/x", "http://img.example/x"),
        ("https://img.example:443/x", "https://img.example/x"),
        ("http://img.example:443/x", "http://img.example:443/x"),
        ("https://img.example:8080/x", "https://img.example:8080/x"),
        ("https://img.example:180/x", "https://img.example:180/x"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("http://[::80]/x", "http://[::80]/x"),
        ("https://img.example/x#top", "https://img.example/x"),
        ("https://img.example#top", "https://img.example"),
        ("https://IMG.example:443", "https://img.example"),
        ("https://img.example/Path/%7Euser?a=B", "https://img.example/Path/%7Euser?a=B"),
        ("http://127.0.0.1:08765/x", "http://127.0.0.1:8765/x"),
        ("http://img.example:080/x", "http://img.example/x"),
        ("https://img.example:00443", "https://img.example"),
        ("http://[::1]:0080/x", "http://[::1]/x"),
    ])
    func normalises(_ text: String, _ normal: String) {
        #expect(ImageURL(text)?.absoluteString == normal)
        #expect(ImageURL(text) == ImageURL(normal))
    }

    @Test(arguments: [
        ("https://user:password@img.example/x", "credentials in URLs are not accepted"),
        ("https://user@img.example/x", "credentials in URLs are not accepted"),
        ("https://:@img.example/x", "credentials in URLs are not accepted"),
        ("https://bücher.example/x", #"the host "bücher.example" is not ASCII"#),
        ("https://例え.jp/x", "is not ASCII"),
        ("https://img.example:99999/x", #"the port "99999" is not a number from 1 to 65535"#),
        ("https://img.example:abc/x", #"the port "abc" is not a number"#),
        ("https://img.example:0/x", #"the port "0" is not"#),
        ("https://img.example:/x", #"the port "" is not"#),
        ("https://img.example:+80/x", #"the port "+80" is not"#),
        ("https://img.example:000080/x", #"the port "000080" is not"#),
        ("https://img.example:99999999999999999999999/x", "is not a number from 1 to 65535"),
        ("https://-a.example/x", "is not a valid host name"),
        ("https://a-.example/x", "is not a valid host name"),
        ("https://a..example/x", "is not a valid host name"),
        ("https://a_b.example/x", "is not a valid host name"),
        ("https://a%2eb/x", "is not a valid host name"),
        ("https://" + String(repeating: "a", count: 64) + ".example/x", "is not a valid host name"),
        ("https://" + Array(repeating: "abcdefghi", count: 26).joined(separator: ".") + "/x", "longer than 253"),
        ("https://1.2.3.999/x", "is not a valid IPv4 address"),
        ("https://1.2.3/x", "is not a valid IPv4 address"),
        // Hexadecimal and lone-number hosts reach an address through libcurl (a probe's
        // http://0x7f000001/ connected to 127.0.0.1): refused like 127.1 and 2130706433.
        ("http://0x7f000001:8080/x", "is not a valid IPv4 address"),
        ("http://0x7/x", "is not a valid IPv4 address"),
        ("http://0X7F.0.0.1/x", "is not a valid IPv4 address"),
        ("http://1.2.3.0x4/x", "is not a valid IPv4 address"),
        ("http://img.example.0x/x", "is not a valid IPv4 address"),
        ("http://2130706433/x", "is not a valid IPv4 address"),
        ("https://[::1/x", "unclosed IPv6 address"),
        ("https://[zz::1]/x", "is not a valid IPv6 address"),
        ("https://[fe80::1%25eth0]/x", "is not a valid IPv6 address"),
        ("https://[::1]x/x", "unexpected text after the IPv6 address"),
        ("https://[]/x", "has no host"),
        ("https://:80/x", "has no host"),
        ("https://img.example/" + String(repeating: "x", count: 8 << 10), "longer than the limit of 8192"),
    ])
    func rejects(_ text: String, _ message: String) {
        let problem = ImageURL.problem(with: text)
        #expect(problem?.contains(message) == true, "\(problem ?? "accepted")")
        #expect(ImageURL(text) == nil)
    }

    @Test func theLimitIsInclusive() {
        let prefix = "https://img.example/"
        let longest = prefix + String(repeating: "x", count: ImageURL.maximumLength - prefix.utf8.count)
        #expect(ImageURL(longest) != nil)
        #expect(ImageURL(longest + "x") == nil)
    }

    @Test func aRefusedPasswordIsNeverRepeated() {
        for text in ["https://u:hunter2@img.example/x", "https://u:hunter2@/x", "https://u:hunter2@img.example:99999/x"] {
            let problem = ImageURL.problem(with: text)
            #expect(problem != nil)
            #expect(problem?.contains("hunter2") == false, "\(problem ?? "")")
        }
    }
}
