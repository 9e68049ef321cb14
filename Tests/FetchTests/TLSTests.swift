import Fetch
import Foundation
import Policy
import Testing
import TestSupport

/// The transport over TLS and HTTP/2, against nginx on 127.0.0.1 with a throwaway CA.
@Suite(.serialized)
struct TLSTests {
    let server: TestTLSServer

    init() throws {
        server = try TestTLSServer()
        try server.serve(TestImages.png(size: 5000), at: "/tls.png")
    }

    @Test func certificatesAreVerifiedByDefault() async throws {
        defer { server.stop() }
        try await CurlTransport.withTransport { transport in
            do {
                _ = try await transport.download(ImageURL(server.url("/tls.png"))!)
                Issue.record("a certificate from an unknown CA was accepted")
            } catch let error as FetchError {
                guard let code = error.code.curlCode, let message = error.code.detail else { Issue.record("\(error)"); return }
                #expect(code == 60, "\(message)")  // CURLE_PEER_FAILED_VERIFICATION
                #expect(message.lowercased().contains("certificate"))
            }
        }
    }

    @Test func aTrustedPrivateCAWorksOverHTTP2WithOneConnection() async throws {
        defer { server.stop() }
        var configuration = TransportConfiguration()
        configuration.certificateAuthorities = server.certificateAuthority
        try await CurlTransport.withTransport(configuration: configuration) { transport in
            for _ in 0..<10 {
                let bytes = try await transport.download(ImageURL(server.url("/tls.png"))!)
                #expect(bytes == TestImages.png(size: 5000))
            }
        }
        // nginx writes each log line as its request finishes.
        #expect(await waitUntil { server.log().filter { $0.hasSuffix(" /tls.png") }.count == 10 })
        let lines = server.log().filter { $0.hasSuffix(" /tls.png") }
        #expect(lines.allSatisfy { $0.hasPrefix("HTTP/2.0 ") }, "\(lines)")
        // Every request went over one reused connection.
        #expect(Set(lines.map { $0.split(separator: " ")[1] }).count == 1, "\(lines)")
    }

    @Test func shuttingDownWithATLSTransferInFlightCancelsIt() async throws {
        defer { server.stop() }
        var configuration = TransportConfiguration()
        configuration.certificateAuthorities = server.certificateAuthority
        let transport = CurlTransport(configuration: configuration)
        let url = ImageURL(server.url("/tls.png"))!
        let downloads = (0..<20).map { _ in Task { try await transport.download(url) } }
        await transport.shutdown()
        // Each download either finished before the shutdown, was cancelled by it, or (its task
        // reaching the transport only after it) was refused as asked for after it; none hangs.
        for download in downloads {
            do { #expect(try await download.value == TestImages.png(size: 5000)) } catch let error as FetchError {
                #expect(error.code == .cancelled || error.code == .alreadyShutdown)
            }
        }
        await #expect(throws: FetchError(url: url, code: .alreadyShutdown)) { try await transport.download(url) }
    }
}
