#if canImport(Glibc)

/// Watches one file's folder with inotify (so that an atomic replace, a rename over the file, is
/// seen as well as a write in place or a removal) on a thread of its own, and calls back after
/// each change to the file.
///
/// The thread blocks in `poll` on the inotify descriptor and a pipe; `stop()` writes to the pipe,
/// and the thread closes both descriptors as it ends.
///
/// Thread safety: `stop()` may be called from any thread, any number of times.
final class SettingsFileWatcher: Sendable {
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let name: String

    /// Watches the folder of `path` (made when missing, as the store's first write would).
    /// Returns nil when inotify or the pipe cannot be had, or the folder cannot be watched.
    init?(path: String) {
        let folder = AtomicFileWriter.parentFolder(of: path)
        name = String(path.split(separator: "/").last ?? Substring(path))
        _ = try? AtomicFileWriter.makeFolders(folder, for: path)
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(descriptor, folder, events) >= 0 else {
            close(descriptor)
            return nil
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        inotify = descriptor
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    /// Runs the watch on a new thread, calling `changed` after each change to the file, until
    /// `stop()`; `ended` is called last. Returns false (and closes everything) when no thread
    /// can be made.
    func start(changed: @escaping @Sendable () -> Void, ended: @escaping @Sendable () -> Void) -> Bool {
        do {
            try OwnedThread.detached { [self] in
                run(changed: changed)
                ended()
            }
            return true
        } catch {
            closeAll()
            return false
        }
    }

    /// Ends the watch: the thread wakes, closes the descriptors and returns.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run(changed: @Sendable () -> Void) {
        var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 8192)
        loop: while true {
            guard poll(&descriptors, 2, -1) >= 0 || errno == EINTR else { break }
            if descriptors[1].revents != 0 { break }
            guard descriptors[0].revents != 0 else { continue }
            var touched = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                let (aboutFile, folderGone) = Self.scan(buffer[0..<count], name: name)
                touched = touched || aboutFile
                if folderGone {
                    if touched { changed() }
                    break loop
                }
            }
            if touched { changed() }
        }
        closeAll()
    }

    /// Whether the events in `bytes` concern `name` (or overflowed), and whether the folder itself
    /// went away. Every length is checked: a record that does not fit ends the scan.
    static func scan(_ bytes: ArraySlice<UInt8>, name: String) -> (aboutFile: Bool, folderGone: Bool) {
        let header = MemoryLayout<inotify_event>.size
        var offset = bytes.startIndex
        var aboutFile = false, folderGone = false
        while bytes.endIndex - offset >= header {
            let (mask, length) = bytes[offset..<offset + header].withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self), Int(raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
            }
            guard length <= bytes.endIndex - offset - header else { break }
            let nameBytes = bytes[offset + header..<offset + header + length].prefix { $0 != 0 }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 || String(decoding: nameBytes, as: UTF8.self) == name { aboutFile = true }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { folderGone = true; aboutFile = true }
            offset += header + length
        }
        return (aboutFile, folderGone)
    }

    private func closeAll() {
        close(inotify)
        close(wakeRead)
        close(wakeWrite)
    }
}
#endif
import Support
