@testable import Transport
import Testing

/// Which requests wait for multiplexing (`CURLOPT_PIPEWAIT`), without I/O: never over plain
/// HTTP, over HTTPS while the host may offer HTTP/2 (issue 17).
struct MultiplexingHostsTests {
    @Test func plainHTTPNeverWaitsWhateverItsAnswers() {
        var hosts = MultiplexingHosts()
        #expect(!hosts.waitsForMultiplexing("http://a.test"))
        hosts.note("http://a.test", curlHTTPVersion: 3)
        #expect(!hosts.waitsForMultiplexing("http://a.test"))
        #expect(hosts.count == 0)
    }

    @Test func httpsWaitsUntilTheHostAnswersOverHTTP1AndAgainAfterAnHTTP2Answer() {
        var hosts = MultiplexingHosts()
        #expect(hosts.waitsForMultiplexing("https://a.test"))
        hosts.note("https://a.test", curlHTTPVersion: 0)   // no answer: says nothing
        #expect(hosts.waitsForMultiplexing("https://a.test"))
        hosts.note("https://a.test", curlHTTPVersion: 2)   // HTTP/1.1
        #expect(!hosts.waitsForMultiplexing("https://a.test"))
        #expect(hosts.waitsForMultiplexing("https://a.test:8443"))   // another port, another host
        hosts.note("https://a.test", curlHTTPVersion: 1)   // HTTP/1.0
        #expect(!hosts.waitsForMultiplexing("https://a.test"))
        hosts.note("https://a.test", curlHTTPVersion: 3)   // HTTP/2: it was upgraded
        #expect(hosts.waitsForMultiplexing("https://a.test"))
        hosts.note("https://b.test", curlHTTPVersion: 30)  // HTTP/3
        #expect(hosts.waitsForMultiplexing("https://b.test"))
    }

    @Test func aFullMemoryForgetsEverythingAndWaitsAgain() {
        var hosts = MultiplexingHosts(capacity: 2)
        hosts.note("https://a.test", curlHTTPVersion: 2)
        hosts.note("https://b.test", curlHTTPVersion: 2)
        hosts.note("https://a.test", curlHTTPVersion: 2)   // known: nothing forgotten
        #expect(hosts.count == 2 && !hosts.waitsForMultiplexing("https://b.test"))
        hosts.note("https://c.test", curlHTTPVersion: 2)
        #expect(hosts.count == 1)
        #expect(hosts.waitsForMultiplexing("https://a.test") && !hosts.waitsForMultiplexing("https://c.test"))
    }
}
