#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LoopbackServer
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
/// - CDN mode (`Configuration.photos`): `GET /r/N/W.jpg` answers row N's photograph (N modulo the
///   photos) at width W, the bytes of `scripts/cdn-photos.sh` as they are; every other width 404.
///   A width counts as the original when it is the widest, else as a thumbnail.
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
        /// CDN mode: the photographs served at every width (`/r/N/WIDTH.jpg`) instead of the
        /// generated originals and thumbnails.
        var photos: PhotoLadders? = nil
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
        /// The connection while answering; nil after.
        var connection: LoopbackConnection?
    }

    private struct State {
        var figures = Figures()
        var requests: [String: [Request]] = [:]
        var script = NetworkScript(entries: [.init(state: NetworkState(.wifi), time: 0)])
        var passStart = ContinuousClock.now
        /// Counts passes, so that a request of an earlier pass ending late changes nothing now.
        var pass = 0
    }

    package let configuration: Configuration
    /// The port it listens on.
    package var port: Int { server.port }
    private let server: LoopbackHTTPServer
    /// What the server's handler answers through: this server until `stop()`, then nil.
    private let owner: Locked<SimulationServer?>
    // Guards the figures, the requests per path and the pass's script.
    private let state = Locked(State())

    /// The failure to start listening, with the call and its errno text.
    package struct StartFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts listening on 127.0.0.1 and a free port (the project's one loopback server,
    /// `LoopbackHTTPServer`; request heads over 16 KiB are answered 431).
    package init(_ configuration: Configuration) throws(StartFailure) {
        self.configuration = configuration
        // The handler reaches this server through `owner`, set once the server exists (nobody
        // knows the port before this returns, so no request comes earlier); it holds the server
        // until `stop()`, which lets it go.
        let owner = Locked<SimulationServer?>(nil)
        self.owner = owner
        do {
            server = try LoopbackHTTPServer(maximumHeadBytes: 16 << 10) { request, connection in
                guard let owner = owner.withLock({ $0 }) else { return .close }
                return owner.answer(request, on: connection) ? .keepAlive : .close
            }
        } catch {
            throw StartFailure(description: "the simulation server: \(error.description)")
        }
        owner.withLock { $0 = self }
    }

    // MARK: - Items and bodies

    /// `/o/N.png` or `/t/N.png`.
    package static func path(row: Int, variant: Variant) -> String {
        "/\(variant == .original ? "o" : "t")/\(row).png"
    }

    /// The item of row `row`: its original and thumbnail on this server; in CDN mode, a template
    /// of every width the photos are offered at.
    package func item(row: Int) -> ImageItem? {
        if let photos = configuration.photos {
            guard let ladder = try? ImageLadder(template: "http://127.0.0.1:\(port)/r/\(row)/{width}.jpg", widths: photos.widths) else { return nil }
            return ImageItem(id: "row-\(row)", ladder: ladder)
        }
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
        server.stop()
        owner.withLock { $0 = nil }
    }

    deinit { server.stop() }

    // MARK: - Requests

    /// Answers one request; returns whether the connection may serve another.
    private func answer(_ request: LoopbackRequest, on client: LoopbackConnection) -> Bool {
        let closing = request.wantsClose
        if request.hasBody {
            client.send(LoopbackResponse.head(400, ["Content-Length: 0", "Connection: close"]))
            return false
        }
        guard request.isWellFormed, request.method == "GET" || request.method == "HEAD" else {
            client.send(LoopbackResponse.head(405, ["Allow: GET, HEAD", "Content-Length: 0", "Connection: close"]))
            return false
        }
        let path = request.path
        guard let (variant, full) = image(at: path) else {
            let body = Array("no image at this path\n".utf8)
            return client.send(LoopbackResponse.head(404, ["Content-Type: text/plain", "Content-Length: \(body.count)"]) + body) && !closing
        }
        guard let id = arrive(path, on: client) else { return false }   // offline: dropped
        guard client.wait(milliseconds: latency(of: path)) else {
            finish(path, id, .aborted)
            return false
        }
        let size = full.count
        let body = request.method == "HEAD" ? [] : full
        let type = full.starts(with: Self.signature) ? "image/png" : "image/jpeg"
        let response = LoopbackResponse.head(200, ["Content-Type: \(type)", "Content-Length: \(size)"] + (closing ? ["Connection: close"] : []))
        guard client.send(response) else {
            finish(path, id, .aborted)
            return false
        }
        let sent = send(body, to: client, counting: variant)
        finish(path, id, sent ? .complete : .aborted)
        return sent && !closing
    }

    /// The variant and the whole body of the image at `path`, or nil when it is not an image of
    /// this run.
    private func image(at path: String) -> (Variant, [UInt8])? {
        if let photos = configuration.photos {
            guard let (row, width) = Self.photoRoute(path, items: configuration.items), let body = photos.body(row: row, width: width) else { return nil }
            return (width == photos.widths.last ? .original : .thumbnail, body)
        }
        guard let variant = route(path) else { return nil }
        return (variant, Self.body(path: path, size: variant == .original ? configuration.originalBytes : configuration.thumbnailBytes))
    }

    /// The bytes this server answers for `url` (CDN mode: the photo's, exactly), or nil when
    /// `url` is not one of its images: what a client must have been given.
    package func expectedBody(of url: ImageURL) -> [UInt8]? {
        let prefix = "http://127.0.0.1:\(port)/"
        guard url.absoluteString.hasPrefix(prefix) else { return nil }
        return image(at: "/" + url.absoluteString.dropFirst(prefix.count))?.1
    }

    /// Row and width of `/r/N/W.jpg` (N below `items`, both without leading zeros), or nil.
    static func photoRoute(_ path: String, items: Int) -> (row: Int, width: Int)? {
        guard path.hasPrefix("/r/"), path.hasSuffix(".jpg") else { return nil }
        let parts = path.dropFirst(3).dropLast(4).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.count <= 9, text.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(text),
                  String(value) == text else { return nil }
            return value
        }
        guard let row = number(parts[0]), row < items, let width = number(parts[1]) else { return nil }
        return (row, width)
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
    private func arrive(_ path: String, on client: LoopbackConnection) -> (pass: Int, index: Int)? {
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
                case .answering: return !(request.connection?.peerClosed ?? true)
                }
            }
            if duplicate {
                state.figures.duplicateTransfers += 1
                if state.figures.duplicatedPaths.count < 10 { state.figures.duplicatedPaths.append(path) }
            }
            state.requests[path, default: []].append(Request(phase: .answering, connection: client))
            return (state.pass, earlier.count)
        }
    }

    private func finish(_ path: String, _ id: (pass: Int, index: Int), _ phase: Request.Phase) {
        state.withLock { state in
            guard id.pass == state.pass, var list = state.requests[path], id.index < list.count else { return }
            list[id.index].phase = phase
            list[id.index].connection = nil
            state.requests[path] = list
        }
    }

    /// Sends `bytes` in chunks counted against the network kind of the moment, stopping (false)
    /// when the script says offline.
    private func send(_ bytes: [UInt8], to client: LoopbackConnection, counting variant: Variant) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let kind = state.withLock { $0.script.state(at: Self.seconds(ContinuousClock.now - $0.passStart)).kind }
            // The network went down: the rest of the body never arrives.
            if kind == .offline { return false }
            let end = min(bytes.count, offset + (64 << 10))
            let sent = client.send(bytes[offset..<end]) { count in
                state.withLock { $0.figures.bytes[kind.rawValue, default: [:]][variant, default: 0] += count }
            }
            if !sent { return false }
            offset = end
        }
        return true
    }

    package static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
