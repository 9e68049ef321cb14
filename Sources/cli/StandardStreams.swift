import Support

/// The process's standard descriptors as the command relies on them: never taken by something
/// else when the caller closed them, and a failed write to standard output never silent.
///
/// ```swift
/// StandardStreams.reserveClosedDescriptors()   // first thing in main
/// …
/// exitProcess(0)                               // reports a lost report: exit 74
/// ```
enum StandardStreams {
    /// The first error a write to standard output met (an errno), 0 when none.
    private static let outputError = Locked<Int32>(0)

    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that the caller closed (`imgpolicy …
    /// <&-` or `>&-`), the wrong way round (standard input write-only, standard output and error
    /// read-only), before anything else can take them: libdispatch's epoll or event descriptor
    /// would otherwise become "standard input" or "standard output" (a read from it gave "invalid
    /// argument", a report was written into it and lost). Using them now fails with EBADF, as on a
    /// closed descriptor, and the command says so.
    static func reserveClosedDescriptors() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", (descriptor == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC)
            guard opened >= 0 else { continue }
            if opened != descriptor {
                _ = dup2(opened, descriptor)
                _ = close(opened)
            } else {
                // Descriptors 0-2 must survive exec for child processes as they were given.
                _ = fcntl(descriptor, F_SETFD, 0)
            }
        }
    }

    /// Records that a write to standard output failed with `code` (the first one is kept).
    static func outputFailed(_ code: Int32) {
        outputError.withLock { if $0 == 0 { $0 = code } }
    }

    /// Ends the process (status 0) as soon as the reader of standard output goes away: a pipe
    /// whose reading end is closed (`imgpolicy network --watch | head -1`), a socket shut down,
    /// a terminal hung up. A thread of its own waits in `poll` for the error or hang-up the kernel
    /// reports on descriptor 1 (asking for no event, so that a writable pipe never wakes it); a
    /// regular file or `/dev/null` never reports one, and the thread waits until the process ends.
    /// For a command that writes only when something happens: without this, it would learn that
    /// its reader left only from the next line's `SIGPIPE`, which may never come.
    ///
    /// `_exit`, not `exit`: nothing is left to flush (the command writes with `write(2)`), and a
    /// flush towards a closed pipe would raise `SIGPIPE`.
    static func exitWhenOutputCloses() {
        try? OwnedThread.detached {
            var descriptor = pollfd(fd: 1, events: 0, revents: 0)
            while true {
                let ready = poll(&descriptor, 1, -1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, descriptor.revents & Int16(POLLERR | POLLHUP) != 0 else { return }
                _exit(0)
            }
        }
    }

    /// Flushes the C library's buffer of standard output (`print`) and returns why standard output
    /// lost bytes, if it did: a full disk (`> /dev/full`), a closed or read-only descriptor, a
    /// closed pipe. nil: everything written arrived.
    static func finish() -> String? {
        var code: Int32 = 0
        // Every stdio stream (standard output is the only one the command writes to through
        // stdio): a failed flush keeps its bytes, so a buffer that failed to go out earlier fails
        // again here.
        if fflush(nil) != 0 { code = errno == 0 ? EIO : errno }
        let recorded = outputError.withLock { $0 }
        if recorded != 0 { code = recorded }
        guard code != 0 else { return nil }
        return String(cString: strerror(code)).lowercased()
    }
}
