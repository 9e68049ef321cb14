import Support

/// One accepted connection of a `LoopbackHTTPServer`, as its handler writes to it. Used by one
/// thread at a time (the connection's); the server closes the descriptor after the handler.
package final class LoopbackConnection: @unchecked Sendable {
    /// The socket (for what this type does not offer).
    package let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Sends all of `bytes`, reporting each piece the system took to `sent`; false when the peer
    /// left (or the server stopped) before all of them went.
    @discardableResult
    package func send<Bytes: Collection<UInt8>>(_ bytes: Bytes, sent: (Int) -> Void = { _ in }) -> Bool {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let count = array[offset...].withUnsafeBytes {
                systemSend(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            sent(count)
            offset += count
        }
        return true
    }

    /// Whether the peer closed the connection (end of stream or a reset), without consuming data.
    package var peerClosed: Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Reads and drops what the peer sends until it closes: a server that hangs.
    package func drainUntilClosed() {
        var byte: UInt8 = 0
        while true {
            let count = recv(descriptor, &byte, 1, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
        }
    }

    /// Ends the sending side: what was sent is delivered, then the peer reads the end.
    package func shutdownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Makes the close a reset (`SO_LINGER` 0): what is unsent is discarded and the peer sees
    /// "connection reset".
    package func resetOnClose() {
        var setting = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &setting, socklen_t(MemoryLayout<linger>.size))
    }

    /// Waits up to `milliseconds`, returning false as soon as the peer closes the connection.
    package func wait(milliseconds: Int) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            let left = deadline - ContinuousClock.now
            let leftMilliseconds = Int(Double(left.components.seconds) * 1000 + Double(left.components.attoseconds) / 1e15)
            if leftMilliseconds <= 0 { return true }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(leftMilliseconds))
            if ready > 0 {
                if peerClosed { return false }
                // A pipelined request waits in the buffer: sleep out the rest instead of polling.
                usleep(UInt32(leftMilliseconds) * 1000)
                return true
            }
            if ready < 0 && errno != EINTR { return false }
        }
    }
}

/// `send(2)`, named apart from `LoopbackConnection.send`.
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    Glibc.send(fd, buffer, count, flags)
    #elseif canImport(Musl)
    Musl.send(fd, buffer, count, flags)
    #else
    Darwin.send(fd, buffer, count, flags)
    #endif
}
