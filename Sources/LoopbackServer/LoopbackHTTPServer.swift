import Support

/// An HTTP/1.1 server on 127.0.0.1 and a port the kernel picks: the one loopback server of the
/// project, under the tests' `TestHTTPServer` (routes that misbehave on purpose) and the
/// simulation's `SimulationServer` (a list's images at a seeded latency). It listens, accepts,
/// serves each connection on a thread of its own (`OwnedThread`) and reads request heads with
/// keep-alive; what to answer is its owner's `Handler`.
///
/// - A request head larger than `maximumHeadBytes` is answered 431 and its connection closed.
/// - A connection the system cannot give a thread or a descriptor to is closed (the client sees
///   it reset and may retry): never a trap.
/// - `stop()` stops listening, shuts down every open connection (a handler blocked sending or
///   waiting sees it closed) and waits for the accepting thread: after it, no new request is read.
///
/// Thread safety: every method may be called from any thread; the handler runs on the
/// connection's thread, many at once.
package final class LoopbackHTTPServer: Sendable {
    /// What a handler returns: whether the connection may serve another request.
    package enum Verdict: Sendable {
        case keepAlive, close
    }

    /// Answers `request` on `connection` (writing the whole response itself).
    package typealias Handler = @Sendable (LoopbackRequest, LoopbackConnection) -> Verdict

    /// The failure to start: the call that failed and the system's reason.
    package struct StartFailure: Error, CustomStringConvertible {
        /// `cannot listen on 127.0.0.1: address already in use`.
        package var description: String
    }

    private struct State {
        var connections: Set<Int32> = []
        var accepted = 0
        var stopped = false
    }

    /// The port it listens on.
    package let port: Int
    /// The largest request head read; a larger one is answered 431.
    package let maximumHeadBytes: Int
    private let listener: Int32
    private let handler: Handler
    // Guards the open connections, the count and whether it stopped.
    private let state = Locked(State())
    private let acceptThread: Locked<OwnedThread?> = Locked(nil)

    /// Starts listening on 127.0.0.1 and a free port.
    package init(maximumHeadBytes: Int = 64 << 10, handler: @escaping Handler) throws(StartFailure) {
        self.maximumHeadBytes = maximumHeadBytes
        self.handler = handler
        let fd = DescriptorReserve.admit(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0))
        guard fd >= 0 else { throw StartFailure(description: "socket: \(errnoText(errno).lowercased())") }
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
            let text = errnoText(errno).lowercased()
            close(fd)
            throw StartFailure(description: "cannot listen on 127.0.0.1: \(text)")
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
            throw StartFailure(description: "cannot start a thread: \(errnoText(error.code).lowercased())")
        }
    }

    /// TCP connections accepted so far.
    package var connectionsAccepted: Int { state.withLock { $0.accepted } }

    /// Stops listening, shuts down every open connection and waits for the accepting thread.
    /// Calling it again does nothing.
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
                    if state.withLock({ $0.stopped }) { return }
                    continue
                }
                return
            }
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(client)
                state.accepted += 1
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
        let connection = LoopbackConnection(descriptor: client)
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            // A pipelined request may be in the buffer already: look before reading.
            var headEnd = buffer.firstRange(ofBytes: [13, 10, 13, 10])?.lowerBound
            while headEnd == nil && buffer.count <= maximumHeadBytes {
                let count = recv(client, &chunk, chunk.count, 0)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                buffer.append(contentsOf: chunk[0..<count])
                headEnd = buffer.firstRange(ofBytes: [13, 10, 13, 10])?.lowerBound
            }
            guard let end = headEnd, end <= maximumHeadBytes else {
                connection.send(LoopbackResponse.head(431, ["Content-Length: 0", "Connection: close"]))
                return
            }
            let request = LoopbackRequest(head: String(decoding: buffer[0..<end], as: UTF8.self))
            buffer.removeFirst(end + 4)
            guard handler(request, connection) == .keepAlive else { return }
        }
    }
}
