import Foundation
import LoopbackServer

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
    public var port: Int { server.port }
    private var server: LoopbackHTTPServer!
    private let lock = NSLock()
    // Guarded by `lock`.
    private var routes: [String: Response]
    private var hitCounts: [String: Int] = [:]
    private var heads: [String: [RequestHead]] = [:]
    private var sentCounts: [String: Int] = [:]
    private var endedCounts: [String: Int] = [:]

    /// Starts listening on 127.0.0.1 and a free port (the project's one loopback server,
    /// `LoopbackHTTPServer`, with this type's routes).
    public init(routes: [String: Response] = [:]) throws {
        self.routes = routes
        // The handler holds the server for as long as it listens (a test's server lives until
        // `stop()` or the end of the test process).
        server = try LoopbackHTTPServer { [self] request, connection in
            serve(request, on: connection) ? .keepAlive : .close
        }
    }

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
    public var connections: Int { server.connectionsAccepted }

    /// Adds or replaces a route.
    public func route(_ path: String, _ response: Response) { lock.withLock { routes[path] = response } }

    /// Stops listening and shuts down the open connections.
    public func stop() {
        server.stop()
    }

    /// Answers one request; returns whether the connection may serve another.
    private func serve(_ head: LoopbackRequest, on connection: LoopbackConnection) -> Bool {
        let path = head.path
        var fields: [String: String] = [:]
        for field in head.fields { fields[field.name.lowercased()] = field.value }
        let (hit, route) = lock.withLock { () -> (Int, Response?) in
            hitCounts[path, default: 0] += 1
            heads[path, default: []].append(RequestHead(hit: hitCounts[path]!, headers: fields))
            return (hitCounts[path]!, routes[path])
        }
        let keepOpen = respond(route ?? .status(404, Array("no route \(path)".utf8)),
                               request: RequestHead(hit: hit, headers: fields), path: path, to: connection)
        lock.withLock { endedCounts[path, default: 0] += 1 }
        return keepOpen
    }

    /// Writes the response; returns whether the connection may serve another request.
    private func respond(_ response: Response, request: RequestHead, path: String, to client: LoopbackConnection) -> Bool {
        let hit = request.hit
        func send(_ bytes: [UInt8], to client: LoopbackConnection) -> Bool {
            client.send(bytes) { [self] count in lock.withLock { sentCounts[path, default: 0] += count } }
        }
        func head(_ status: Int, _ headers: [String]) -> [UInt8] {
            LoopbackResponse.head(status, headers)
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
            client.resetOnClose()
            return false
        case .resetAfter(let status, let headers, let body, let sent):
            _ = send(head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(sent), to: client)
            // Let the bytes leave before the reset discards what is unsent.
            client.shutdownSending()
            client.resetOnClose()
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
            client.drainUntilClosed()
            return false
        case .dynamic(let make):
            return respond(make(hit), request: request, path: path, to: client)
        case .request(let make):
            return respond(make(request), request: request, path: path, to: client)
        case .stall(let status, let headers, let body, let sent):
            guard send(head(status, headers + ["Content-Length: \(body.count)"]) + body.prefix(sent), to: client) else { return false }
            client.drainUntilClosed()
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
}
