import Fetch
@testable import Accounting
@testable import Caching
@testable import HTTPSemantics
@testable import Lists
@testable import Pipeline
@testable import Transport
import Foundation
import Policy
import Testing
import TestSupport

/// Issue 16: what libcurl reports is translated into what happened. A garbage status line (HTTP/0.9
/// to libcurl) was reported as a refused redirect, and one 10 MB header field as "Out of memory".
@Suite(.serialized)
struct TransportErrorMessageTests {
    static let transport: CurlTransport = {
        var configuration = TransportConfiguration()
        configuration.totalTimeout = .seconds(20)
        configuration.retry = .never
        return CurlTransport(configuration: configuration)
    }()

    let server: TestHTTPServer

    init() throws {
        server = try TestHTTPServer()
    }

    /// One error shape (issue 17): a code is a struct over a private code; its kind compares
    /// without what it concerns, and what it concerns is read from properties; a local failure
    /// names its file and the system's error.
    @Test func aCodeSaysItsKindAndWhatItConcerns() {
        let url = ImageURL("http://127.0.0.1/a.png")!
        let status = FetchError.Code.httpStatus(503)
        #expect(status.kind == .httpStatus && status.httpStatus == 503 && status.curlCode == nil)
        #expect(status != .httpStatus(404) && status == .httpStatus(503))
        let curl = FetchError.Code.transport(curlCode: 7, message: "connection refused")
        #expect(curl.kind == .transport && curl.curlCode == 7 && curl.detail == "connection refused")
        let cut = FetchError.Code.truncated(expected: 5000, received: 1000)
        #expect(cut.expectedLength == 5000 && cut.receivedLength == 1000 && cut.kind == .truncated)
        let local = FetchError(url: url, code: .localIO(path: "/cache/ab/cd", errno: ENOSPC, message: "cannot write the entry"))
        #expect(local.code.path == "/cache/ab/cd" && local.code.systemErrno == ENOSPC && local.code.kind == .localIO)
        #expect(local.description == "http://127.0.0.1/a.png: /cache/ab/cd: cannot write the entry (no space left on device)")
        #expect(!local.isRemote && FetchError(url: url, code: status).isRemote)
        #expect(FetchError(url: url, code: .alreadyShutdown).code != .cancelled)
        #expect("\(status)" == "httpStatus(503)" && "\(FetchError.Code.cancelled)" == "cancelled")
    }

    func failure(_ path: String) async -> FetchError? {
        do {
            _ = try await Self.transport.download(ImageURL(server.url(path))!)
            return nil
        } catch {
            return error
        }
    }

    @Test func anAnswerWithoutAnHTTPStatusLineIsNotAnHTTPResponse() async throws {
        server.route("/garbage", .raw(Array("GARBAGE\r\n\r\nnot http at all".utf8)))
        let error = try #require(await failure("/garbage"))
        #expect(error.reason.hasPrefix("not an HTTP response"), "\(error)")
        #expect(!error.reason.contains("redirect"), "\(error)")
        #expect(error.isRemote)
    }

    @Test func aRedirectToAnotherSchemeIsStillARefusedRedirect() async throws {
        server.route("/to-file", .redirect("file:///etc/passwd"))
        let error = try #require(await failure("/to-file"))
        #expect(error.reason.contains("refused to follow a redirect"), "\(error)")
    }

    @Test func aHugeHeaderFieldIsAHeaderTooLarge() async throws {
        server.route("/big", .headers(200, ["X-Big: " + String(repeating: "a", count: 10_000_000)], TestImages.png()))
        let error = try #require(await failure("/big"))
        #expect(error.reason.hasPrefix("a response header is too large"), "\(error)")
        #expect(!error.reason.lowercased().contains("out of memory"), "\(error)")
    }

    @Test func tooManyHeaderFieldsAreHeadersTooLarge() async throws {
        let fields = (0..<400).map { "X-Field-\($0): " + String(repeating: "b", count: 1_000) }
        server.route("/many", .headers(200, fields, TestImages.png()))
        let error = try #require(await failure("/many"))
        #expect(error.reason.hasPrefix("the response's header fields are too large"), "\(error)")
    }

    @Test func aChunkedBodyCutShortSaysSoWithoutALength() async throws {
        let image = TestImages.png(size: 20_000)
        let chunk = Array(String(image.count / 2, radix: 16).utf8) + Array("\r\n".utf8) + Array(image.prefix(image.count / 2))
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n"
        server.route("/chunked", .raw(Array(head.utf8) + chunk + Array("\r\n".utf8)))
        let error = try #require(await failure("/chunked"))
        #expect(error.reason.contains("ended early") && !error.reason.contains("-1"), "\(error)")
    }

    @Test func oneContentLengthThatIsNotANumberIsNamedSo() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 0x92cad\r\nConnection: close\r\n\r\n"
        server.route("/hex", .raw(Array(head.utf8) + TestImages.png()))
        let error = try #require(await failure("/hex"))
        #expect(error.reason.contains("a Content-Length that is not a length (0x92cad)") && !error.reason.contains("disagree"), "\(error)")
    }
}
