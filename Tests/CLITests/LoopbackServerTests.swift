import Foundation
import LoopbackServer
import Testing
import TestSupport

/// The one loopback server under the tests' `TestHTTPServer` and the simulation's server: what
/// both rely on, checked with raw sockets (no HTTP client in between).
struct LoopbackServerTests {
    /// Connects to 127.0.0.1:`port`, sends `bytes`, and returns everything read until the server
    /// closes (or 5 s pass).
    func exchange(_ bytes: String, port: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let request = Array(bytes.utf8)
        try #require(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    @Test func requestsAreParsedAndConnectionsKeptAlive() throws {
        let seen = LockedList<String>()
        let server = try LoopbackHTTPServer { request, connection in
            seen.append("\(request.method) \(request.path) \(request.header("X-Name") ?? "-") close:\(request.wantsClose)")
            let body = Array("hello".utf8)
            connection.send(LoopbackResponse.head(200, ["Content-Length: \(body.count)"]) + body)
            return request.wantsClose ? .close : .keepAlive
        }
        defer { server.stop() }
        // Two requests on one connection, sent at once (pipelined; the second asks to close):
        // both answered, in order.
        let answer = try exchange("GET /a?w=400 HTTP/1.1\r\nX-Name:  spaced  \r\n\r\nHEAD /b HTTP/1.1\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(answer == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        #expect(seen.values == ["GET /a?w=400 spaced close:false", "HEAD /b - close:true"])
        #expect(server.connectionsAccepted == 1)
        // HTTP/1.0 closes unless it asks to keep the connection.
        #expect(LoopbackRequest(head: "GET / HTTP/1.0").wantsClose)
        #expect(!LoopbackRequest(head: "GET / HTTP/1.0\r\nConnection: keep-alive").wantsClose)
        #expect(LoopbackRequest(head: "POST / HTTP/1.1\r\nContent-Length: 3").hasBody)
        #expect(!LoopbackRequest(head: "GET /").isWellFormed)
    }

    @Test func aHeadLargerThanTheLimitIs431AndClosed() throws {
        let server = try LoopbackHTTPServer(maximumHeadBytes: 1024) { _, connection in
            connection.send(LoopbackResponse.head(200, ["Content-Length: 0"]))
            return .keepAlive
        }
        defer { server.stop() }
        let answer = try exchange("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 4000) + "\r\n\r\n", port: server.port)
        #expect(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(answer.prefix(80))")
    }

    /// `stop()` ends a handler blocked on its connection (a server that hangs) and refuses new
    /// connections once it returns.
    @Test func stopEndsOpenConnectionsAndListening() async throws {
        let entered = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let server = try LoopbackHTTPServer { _, connection in
            entered.signal()
            connection.drainUntilClosed()
            ended.signal()
            return .close
        }
        let port = server.port
        let client = Thread { _ = try? self.exchange("GET /hang HTTP/1.1\r\n\r\n", port: port) }
        client.start()
        try #require(entered.wait(timeout: .now() + 30) == .success, "the handler never started")
        server.stop()
        #expect(ended.wait(timeout: .now() + 30) == .success, "the blocked handler did not see its connection shut down")
        #expect(!canConnect(port: port), "a stopped server still accepts connections")
    }
}
