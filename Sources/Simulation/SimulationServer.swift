#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Support
import Policy


/// The image server a simulation runs against: HTTP/1.1 over POSIX sockets on 127.0.0.1 and a
/// free port, one thread per connection, keep-alive.
///
/// - `GET /o/N.png` and `GET /t/N.png` (N from 0 to items − 1) answer 200 with the original's or
///   the thumbnail's body after the URL's latency. Bodies are the given sizes, real PNG bytes as
///   far as a sniffer looks: the PNG signature, then `imgpolicy-simulate PATH`, then zeros, so a
///   client can check which image it was given (`path(in:)`).
/// - A URL's latency is drawn from the range by the seeded generator for that URL alone, so it is
///   the same in every pass and whatever order requests come in.
/// - While the script says offline, nothing gets through, as on a network that is down: a request
///   is dropped unanswered (the connection closed) and counted (`offlineRequests`); a response
///   whose latency ends offline is not sent, and one being sent when the network goes is cut.
/// - It counts, per pass: requests; body bytes sent by network kind (the script's state when the
///   body is sent) and variant; and duplicate transfers: a request for a path whose body was
///   already sent in full, or whose earlier request is still being answered on a connection the
///   client has not closed (a cancelled request's connection is closed by the client, so a retry
///   after a cancel is not a duplicate).
/// - Anything else (another method or path, a request head over 16 KiB, a body) gets 4xx.
///
/// Thread safety: every method may be called from any thread.
package final class SimulationServer: Sendable {
    package struct Configuration: Sendable {
        var items: Int
        var originalBytes: Int
        var thumbnailBytes: Int
        var latency: LatencyRange
        var seed: UInt64
    }

    /// What a pass sent and was asked.
    package struct Figures: Sendable, Equatable {
        var requests = 0
        package var duplicateTransfers = 0
        var offlineRequests = 0
        /// Body bytes by network kind (`wifi`, `cellular`, …), then variant.
        var bytes: [String: [Variant: Int]] = [:]
        /// The first duplicated paths (up to 10), for the report.
        var duplicatedPaths: [String] = []

        var totalBytes: Int { bytes.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
    }

    private struct Request {
        enum Phase { case answering, complete, aborted }
        var phase: Phase
        /// The connection while answering; -1 after.
        var descriptor: Int32
    }

    private struct State {
        var figures = Figures()
        var requests: [String: [Request]] = [:]
        var nextRequest = 0
        var connections: Set<Int32> = []
        var script = NetworkScript(entries: [.init(state: NetworkState(.wifi), time: 0)])
        var passStart = ContinuousClock.now
        /// Counts passes, so that a request of an earlier pass ending late changes nothing now.
        var pass = 0
        var stopped = false
    }

    package let configuration: Configuration
    /// The port it listens on.
    package let port: Int
    private let listener: Int32
    // Guards the figures, the requests per path, the open connections and the pass's script.
    private let state = Locked(State())
    private let acceptThread: Locked<OwnedThread?> = Locked(nil)

    /// The failure to start listening, with the call and its errno text.
    package struct StartFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts listening on 127.0.0.1 and a free port.
    package init(_ configuration: Configuration) throws(StartFailure) {
        self.configuration = configuration
        let fd = DescriptorReserve.admit(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0))
        guard fd >= 0 else { throw StartFailure(description: "the simulation server: socket: \(errnoText(errno))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 512) == 0 else {
            let text = errnoText(errno)
            close(fd)
            throw StartFailure(description: "the simulation server: cannot listen on 127.0.0.1: \(text)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        do {
            let thread = try OwnedThread { [self] in acceptLoop() }
            acceptThread.withLock { $0 = thread }
        } catch {
            close(fd)
            throw StartFailure(description: "the simulation server: cannot start a thread: \(errnoText(error.code))")
        }
    }

    // MARK: - Items and bodies

    /// `/o/N.png` or `/t/N.png`.
    package static func path(row: Int, variant: Variant) -> String {
        "/\(variant == .original ? "o" : "t")/\(row).png"
    }

    /// The item of row `row`: its original and thumbnail on this server.
    package func item(row: Int) -> ImageItem? {
        guard let original = ImageURL("http://127.0.0.1:\(port)\(Self.path(row: row, variant: .original))"),
              let thumbnail = ImageURL("http://127.0.0.1:\(port)\(Self.path(row: row, variant: .thumbnail))") else { return nil }
        return ImageItem(id: "row-\(row)", original: original, thumbnail: thumbnail)
    }

    /// The delay before answering `path`, in milliseconds.
    package func latency(of path: String) -> Int {
        let range = configuration.latency
        var random = SimulationRandom(seed: configuration.seed, purpose: "latency " + path)
        return range.minimum + Int(random.next() % UInt64(range.maximum - range.minimum + 1))
    }

    /// A digest (FNV-1a) of every URL's latency: equal seeds give equal digests.
    package var latencyDigest: String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for row in 0..<configuration.items {
            for variant in Variant.allCases {
                for byte in "\(latency(of: Self.path(row: row, variant: variant)));".utf8 {
                    hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                }
            }
        }
        return String(hash, radix: 16)
    }

    package static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// A private chunk's header (`imPs`, its length filled in per body) and the tag it starts with.
    package static let chunkType = Array("imPs".utf8)
    package static let tag = Array("\nimgpolicy-simulate ".utf8)

    /// The smallest body size: the signature, the chunks' framing (32 bytes), the tag and the
    /// longest path.
    package static let smallestBody = 96

    /// The body of `path`: a whole PNG container (what the fetcher accepts: `ImageCompleteness`)
    /// of `size` bytes: the signature, one private chunk holding the tag, the path, a newline and
    /// zeros, then the `IEND` chunk.
    package static func body(path: String, size: Int) -> [UInt8] {
        var data = tag + Array(path.utf8) + [0x0A]
        if data.count < size - 32 { data += [UInt8](repeating: 0, count: size - 32 - data.count) }
        let length = UInt32(data.count)
        let lengthBytes = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        return signature + lengthBytes + chunkType + data + [0, 0, 0, 0] + [0, 0, 0, 0] + Array("IEND".utf8) + [0, 0, 0, 0]
    }

    /// The path a body says it is for; nil when the bytes are not a body of this server.
    package static func path(in bytes: [UInt8]) -> String? {
        let start = signature.count + 8 + tag.count
        guard bytes.count > start, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == chunkType,
              Array(bytes[16..<start]) == tag else { return nil }
        let rest = bytes[start..<min(bytes.count, start + 64)]
        guard let end = rest.firstIndex(of: 0x0A) else { return nil }
        return String(decoding: rest[..<end], as: UTF8.self)
    }

    // MARK: - Passes

    /// Starts a pass: zero figures, the script's clock starting at `start`.
    package func beginPass(script: NetworkScript, start: ContinuousClock.Instant) {
        state.withLock { state in
            state.figures = Figures()
            state.requests = [:]
            state.script = script
            state.passStart = start
            state.pass += 1
        }
    }

    /// The figures of the pass so far.
    package var figures: Figures { state.withLock { $0.figures } }

    /// Stops listening, closes every connection and waits for the accept thread.
    package func stop() {
        let (wasRunning, open) = state.withLock { state -> (Bool, [Int32]) in
            defer { state.stopped = true }
            return (!state.stopped, Array(state.connections))
        }
        guard wasRunning else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        // Descriptors stay open until their thread removes them (under the lock), so these are
        // still the connections' own.
        state.withLock { state in
            for fd in open where state.connections.contains(fd) { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        acceptThread.withLock { $0 }?.join()
        close(listener)
    }

    deinit { stop() }

    // MARK: - Connections

    private func acceptLoop() {
        while true {
            let client = DescriptorReserve.admit(accept(listener, nil, nil))
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE {
                    // No descriptor for it now (the client sees the connection refused or
                    // reset, and retries): wait a little rather than spin, then go on.
                    usleep(10_000)
                    continue
                }
                return
            }
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(client)
                return true
            }
            guard accepted else { close(client); continue }
            do {
                try OwnedThread.detached { [self] in serve(client) }
            } catch {
                state.withLock { _ = $0.connections.remove(client) }
                close(client)
            }
        }
    }

    private func serve(_ client: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(client) }
            close(client)
        }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            var headEnd: Int?
            while headEnd == nil {
                let count = recv(client, &chunk, chunk.count, 0)
                if count <= 0 { return }
                buffer.append(contentsOf: chunk[0..<count])
                headEnd = Self.find([13, 10, 13, 10], in: buffer)
                if headEnd == nil && buffer.count > 16 << 10 {
                    _ = send(Self.head(431, ["Content-Length: 0", "Connection: close"]), to: client)
                    return
                }
            }
            guard let end = headEnd else { return }
            let head = String(decoding: buffer[0..<end], as: UTF8.self)
            buffer.removeFirst(end + 4)
            guard answer(head, on: client) else { return }
        }
    }

    /// Answers one request; returns whether the connection may serve another.
    private func answer(_ head: String, on client: Int32) -> Bool {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = (lines.first ?? "").split(separator: " ")
        var closing = parts.count > 2 && parts[2] == "HTTP/1.0"
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if lower.hasPrefix("connection:") { closing = lower.contains("close") }
            if (lower.hasPrefix("content-length:") && !lower.hasSuffix(" 0")) || lower.hasPrefix("transfer-encoding:") {
                _ = send(Self.head(400, ["Content-Length: 0", "Connection: close"]), to: client)
                return false
            }
        }
        guard parts.count == 3, parts[0] == "GET" || parts[0] == "HEAD" else {
            _ = send(Self.head(405, ["Allow: GET, HEAD", "Content-Length: 0", "Connection: close"]), to: client)
            return false
        }
        let path = String(parts[1])
        guard let variant = route(path) else {
            let body = Array("no image at this path\n".utf8)
            return send(Self.head(404, ["Content-Type: text/plain", "Content-Length: \(body.count)"]) + body, to: client) && !closing
        }
        guard let id = arrive(path, on: client) else { return false }   // offline: dropped
        guard wait(milliseconds: latency(of: path), on: client) else {
            finish(path, id, .aborted)
            return false
        }
        let size = variant == .original ? configuration.originalBytes : configuration.thumbnailBytes
        let body = parts[0] == "HEAD" ? [] : Self.body(path: path, size: size)
        let response = Self.head(200, ["Content-Type: image/png", "Content-Length: \(size)"] + (closing ? ["Connection: close"] : []))
        guard send(response, to: client) else {
            finish(path, id, .aborted)
            return false
        }
        let sent = send(body, to: client, counting: variant)
        finish(path, id, sent ? .complete : .aborted)
        return sent && !closing
    }

    /// The variant a path is for, or nil when it is not an image of this run.
    private func route(_ path: String) -> Variant? {
        let variant: Variant
        if path.hasPrefix("/o/") { variant = .original } else if path.hasPrefix("/t/") { variant = .thumbnail } else { return nil }
        let number = path.dropFirst(3)
        guard number.hasSuffix(".png") else { return nil }
        let digits = number.dropLast(4)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ ("0"..."9").contains($0) }),
              let row = Int(digits), row < configuration.items, String(row) == digits else { return nil }
        return variant
    }

    /// Records a request's arrival (and whether it duplicates a transfer); nil when the script
    /// says offline (the request is dropped).
    private func arrive(_ path: String, on client: Int32) -> (pass: Int, index: Int)? {
        state.withLock { state -> (pass: Int, index: Int)? in
            let now = Self.seconds(ContinuousClock.now - state.passStart)
            if state.script.state(at: now).kind == .offline {
                state.figures.offlineRequests += 1
                return nil
            }
            state.figures.requests += 1
            let earlier = state.requests[path, default: []]
            let duplicate = earlier.contains { request in
                switch request.phase {
                case .complete: return true
                case .aborted: return false
                case .answering: return !Self.peerClosed(request.descriptor)
                }
            }
            if duplicate {
                state.figures.duplicateTransfers += 1
                if state.figures.duplicatedPaths.count < 10 { state.figures.duplicatedPaths.append(path) }
            }
            state.requests[path, default: []].append(Request(phase: .answering, descriptor: client))
            return (state.pass, earlier.count)
        }
    }

    private func finish(_ path: String, _ id: (pass: Int, index: Int), _ phase: Request.Phase) {
        state.withLock { state in
            guard id.pass == state.pass, var list = state.requests[path], id.index < list.count else { return }
            list[id.index].phase = phase
            list[id.index].descriptor = -1
            state.requests[path] = list
        }
    }

    /// Waits `milliseconds`, returning false as soon as the client closes the connection.
    private func wait(milliseconds: Int, on client: Int32) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            let left = deadline - ContinuousClock.now
            let leftMilliseconds = Int(Self.seconds(left) * 1000)
            if leftMilliseconds <= 0 { return true }
            var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(leftMilliseconds))
            if ready > 0 {
                if Self.peerClosed(client) { return false }
                // A pipelined request waits in the buffer: sleep out the rest instead of polling.
                usleep(UInt32(leftMilliseconds) * 1000)
                return true
            }
            if ready < 0 && errno != EINTR { return false }
        }
    }

    /// Whether the peer closed `fd` (end of stream or a reset), without consuming data.
    private static func peerClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Sends `bytes`; with `variant`, in chunks counted against the network kind of the moment,
    /// stopping (false) when the script says offline.
    private func send(_ bytes: [UInt8], to client: Int32, counting variant: Variant? = nil) -> Bool {
        var offset = 0
        while offset < bytes.count {
            var kind: NetworkKind?
            if variant != nil {
                kind = state.withLock { $0.script.state(at: Self.seconds(ContinuousClock.now - $0.passStart)).kind }
                // The network went down: the rest of the body never arrives.
                if kind == .offline { return false }
            }
            let end = min(bytes.count, offset + (64 << 10))
            let sent = bytes[offset..<end].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return false }
            if let variant, let kind {
                state.withLock { $0.figures.bytes[kind.rawValue, default: [:]][variant, default: 0] += sent }
            }
            offset += sent
        }
        return true
    }

    private static func head(_ status: Int, _ headers: [String]) -> [UInt8] {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 431: "Request Header Fields Too Large"][status] ?? "Error"
        return Array((["HTTP/1.1 \(status) \(reason)"] + headers + ["", ""]).joined(separator: "\r\n").utf8)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }

    package static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
