import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 and a free port, started and stopped by the tests themselves,
/// with routes that count their hits and misbehave on purpose.
public final class TestHTTPServer: @unchecked Sendable {
    /// What a route answers.
    public indirect enum Response: Sendable {
        /// 200 with `Content-Length` and this body.
        case ok([UInt8], contentType: String = "image/png")
        /// Any status, with a body.
        case status(Int, [UInt8] = [], contentType: String = "text/plain")
        /// Any status with extra header lines (`"Retry-After: 2"`), a body and its `Content-Length`.
        case headers(Int, [String], [UInt8] = [])
        /// A redirect (302) to `location`.
        case redirect(String)
        /// Waits, then answers.
        case delayed(Double, Response)
        /// 200 with `Content-Length`, the body sent in chunks of `chunk` bytes every `interval` seconds.
        case drip([UInt8], chunk: Int, interval: Double)
        /// 200 with `Transfer-Encoding: chunked`.
        case chunked([UInt8])
        /// 200 with no length: the body ends when the connection closes.
        case untilClose([UInt8])
        /// 200 declaring `declared` bytes, sending `body`, then closing.
        case cutShort(declared: Int, [UInt8])
        /// Reads the request and resets the connection.
        case reset
        /// Any status with extra header lines and the `Content-Length` of `body`, then only the
        /// first `sent` bytes of it, then a reset of the connection (a link that dropped: what the
        /// client had not received yet may be lost with it).
        case resetAfter(Int, [String], [UInt8], sent: Int)
        /// Any status with extra header lines and the `Content-Length` of `body`, the first `burst`
        /// bytes at once, then the rest in chunks of `chunk` bytes every `interval` seconds (a
        /// link that slowed down, yet stays above a client's low-speed limit).
        case burstThenDrip(Int, [String], [UInt8], burst: Int, chunk: Int, interval: Double)
        /// These bytes exactly, as the whole answer (head and body, however malformed), then the
        /// connection is closed.
        case raw([UInt8])
        /// These bytes exactly, then the connection stays open for the next request (a server
        /// whose `Content-Length` is shorter than what it sent leaves the excess in it).
        case rawKeepingConnection([UInt8])
        /// Reads the request and never answers; the connection stays open until the client closes it.
        case hang
        /// Computed per hit (1 for the first).
        case dynamic(@Sendable (Int) -> Response)
        /// Computed from the request (its header fields and hit number).
        case request(@Sendable (RequestHead) -> Response)
        /// Any status with extra header lines and its `Content-Length`, the body sent in chunks of
        /// `chunk` bytes every `interval` seconds.
        case dripHeaders(Int, [String], [UInt8], chunk: Int, interval: Double)
        /// Any status with extra header lines and the `Content-Length` of `body`, then only the
        /// first `sent` bytes of it; the rest never comes (the connection stays open until the
        /// client closes it).
        case stall(Int, [String], [UInt8], sent: Int)
    }

    /// A request as a route sees it.
    public struct RequestHead: Sendable {
        /// 1 for the first request of the path.
        public var hit: Int
        /// The header fields, names lowercased (the last of repeated ones).
        public var headers: [String: String]

        /// The value of the field `name` (any case), if sent.
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let lock = NSLock()
    // Guarded by `lock`.
    private var routes: [String: Response]
    private var hitCounts: [String: Int] = [:]
    private var heads: [String: [RequestHead]] = [:]
    private var sentCounts: [String: Int] = [:]
    private var endedCounts: [String: Int] = [:]
    private var connectionCount = 0
    private var stopped = false

    /// Starts listening on 127.0.0.1 and a free port.
    public init(routes: [String: Response] = [:]) throws {
        self.routes = routes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 512) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? "" : "/")\(path)" }

    /// How many requests `path` has had.
    public func hits(_ path: String) -> Int { lock.withLock { hitCounts[path.hasPrefix("/") ? path : "/" + path, default: 0] } }

    /// The requests `path` has had, in order.
    public func requests(_ path: String) -> [RequestHead] { lock.withLock { heads[path.hasPrefix("/") ? path : "/" + path] ?? [] } }

    /// Bytes sent (heads and bodies) in answer to `path`.
    public func bytesSent(_ path: String) -> Int { lock.withLock { sentCounts[path.hasPrefix("/") ? path : "/" + path, default: 0] } }

    /// Responses to `path` that have ended (sent whole, or given up when the client left).
    public func responsesEnded(_ path: String) -> Int { lock.withLock { endedCounts[path.hasPrefix("/") ? path : "/" + path, default: 0] } }

    /// Requests over all paths.
    public var totalHits: Int { lock.withLock { hitCounts.values.reduce(0, +) } }

    /// TCP connections accepted so far.
    public var connections: Int { lock.withLock { connectionCount } }

    /// Adds or replaces a route.
    public func route(_ path: String, _ response: Response) { lock.withLock { routes[path] = response } }

    /// Stops accepting connections.
    public func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        // Only shut down here: the accept loop closes the descriptor when it leaves, so that its
        // number cannot be reused by another server's listener while this loop still accepts on it.
        if wasRunning { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            lock.withLock { connectionCount += 1 }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { close(client) }
        while true {
            // Read one request head.
            var headEnd: Int?
            while headEnd == nil {
                let count = recv(client, &chunk, chunk.count, 0)
                if count <= 0 { return }
                buffer.append(contentsOf: chunk[0..<count])
                headEnd = Self.find([13, 10, 13, 10], in: buffer)
            }
            let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
            buffer.removeFirst(headEnd! + 4)
            let requestLine = head.split(separator: "\r\n").first ?? ""
            let parts = requestLine.split(separator: " ")
            let path = parts.count > 1 ? String(parts[1]) : "/"
            var fields: [String: String] = [:]
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let (hit, route) = lock.withLock { () -> (Int, Response?) in
                hitCounts[path, default: 0] += 1
                heads[path, default: []].append(RequestHead(hit: hitCounts[path]!, headers: fields))
                return (hitCounts[path]!, routes[path])
            }
            let keepOpen = respond(route ?? .status(404, Array("no route \(path)".utf8)),
                                   request: RequestHead(hit: hit, headers: fields), path: path, to: client)
            lock.withLock { endedCounts[path, default: 0] += 1 }
            if !keepOpen { return }
        }
    }

    /// Writes the response; returns whether the connection may serve another request.
    private func respond(_ response: Response, request: RequestHead, path: String, to client: Int32) -> Bool {
        let hit = request.hit
        func send(_ bytes: [UInt8], to client: Int32) -> Bool {
            self.send(bytes, to: client, path: path)
        }
        func head(_ status: Int, _ headers: [String]) -> [UInt8] {
            Array((["HTTP/1.1 \(status) \(status == 200 ? "OK" : "X")"] + headers + ["", ""]).joined(separator: "\r\n").utf8)
        }
        switch response {
        case .ok(let body, let contentType):
            return send(head(200, ["Content-Type: \(contentType)", "Content-Length: \(body.count)"]) + body, to: client)
        case .status(let status, let body, let contentType):
            return send(head(status, ["Content-Type: \(contentType)", "Content-Length: \(body.count)"]) + body, to: client)
        case .headers(let status, let headers, let body):
            return send(head(status, headers + ["Content-Length: \(body.count)"]) + body, to: client)
        case .redirect(let location):
            return send(head(302, ["Location: \(location)", "Content-Length: 0"]), to: client)
        case .delayed(let seconds, let next):
            Thread.sleep(forTimeInterval: seconds)
            return respond(next, request: request, path: path, to: client)
        case .drip(let body, let chunkSize, let interval):
            return respond(.dripHeaders(200, ["Content-Type: image/png"], body, chunk: chunkSize, interval: interval),
                           request: request, path: path, to: client)
        case .chunked(let body):
            var bytes = head(200, ["Content-Type: image/png", "Transfer-Encoding: chunked"])
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + 4096)
                bytes += Array("\(String(end - offset, radix: 16))\r\n".utf8) + body[offset..<end] + [13, 10]
                offset = end
            }
            bytes += Array("0\r\n\r\n".utf8)
            return send(bytes, to: client)
        case .untilClose(let body):
            _ = send(head(200, ["Content-Type: image/png", "Connection: close"]) + body, to: client)
            return false
        case .cutShort(let declared, let body):
            _ = send(head(200, ["Content-Type: image/png", "Content-Length: \(declared)"]) + body, to: client)
            return false
        case .reset:
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            return false
        case .resetAfter(let status, let headers, let body, let sent):
            _ = send(head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(sent), to: client)
            // Let the bytes leave before the reset discards what is unsent.
            shutdown(client, Int32(SHUT_WR))
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            return false
        case .raw(let bytes):
            _ = send(bytes, to: client)
            return false
        case .rawKeepingConnection(let bytes):
            return send(bytes, to: client)
        case .burstThenDrip(let status, let headers, let body, let burst, let chunkSize, let interval):
            guard send(head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(burst), to: client) else { return false }
            var offset = min(burst, body.count)
            while offset < body.count {
                Thread.sleep(forTimeInterval: interval)
                let end = min(body.count, offset + chunkSize)
                guard send(Array(body[offset..<end]), to: client) else { return false }
                offset = end
            }
            return true
        case .hang:
            var byte: UInt8 = 0
            while recv(client, &byte, 1, 0) > 0 {}
            return false
        case .dynamic(let make):
            return respond(make(hit), request: request, path: path, to: client)
        case .request(let make):
            return respond(make(request), request: request, path: path, to: client)
        case .stall(let status, let headers, let body, let sent):
            guard send(head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(sent), to: client) else { return false }
            var byte: UInt8 = 0
            while recv(client, &byte, 1, 0) > 0 {}
            return false
        case .dripHeaders(let status, let headers, let body, let chunkSize, let interval):
            guard send(head(status, headers + ["Content-Length: \(body.count)"]), to: client) else { return false }
            var offset = 0
            while offset < body.count {
                Thread.sleep(forTimeInterval: interval)
                let end = min(body.count, offset + chunkSize)
                guard send(Array(body[offset..<end]), to: client) else { return false }
                offset = end
            }
            return true
        }
    }

    private func send(_ bytes: [UInt8], to client: Int32, path: String) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            lock.withLock { sentCounts[path, default: 0] += sent }
            offset += sent
        }
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }
}
