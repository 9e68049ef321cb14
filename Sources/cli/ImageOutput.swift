import Decoding
import Policy
import Support

/// Writes the image bytes of `--output FILE`.
///
/// - A regular file (or a path that does not exist yet) is replaced atomically: temporary file in
///   the same folder, `fsync`, `rename`. A symbolic link is followed: its target is replaced and
///   the link kept; a link to nothing is refused. The folder must exist.
/// - A character device (`/dev/null`, `/dev/stdout` on a terminal) or a FIFO (`/dev/stdout` on a
///   pipe, `mkfifo`) is written to directly, never replaced. A FIFO is opened with `O_NONBLOCK`:
///   when no process reads it the open fails at once (exit 74, nothing written) instead of
///   waiting for a reader forever; once open, the write waits for the reader as `cat > fifo` does.
/// - A directory, block device or socket is refused (exit 74).
/// - `-` is refused as a usage error (exit 64), not written as a file named `-`.
enum ImageOutput {
    /// Writes `bytes` to `path`, or throws a failure with exit status 74 naming the path.
    static func write(_ bytes: ImageBytes, to path: String) throws(CommandFailure) {
        // `-` is not a file name here: standard output carries the decision's report.
        guard path != "-" else { throw standardOutputRefused }
        let kind = FileKind(path: path, followingLinks: true)
        if let kind, refuses(kind) { throw refusal(path, kind) }
        if kind == .regular, let refusal = ArgumentPaths.replacementRefusal(path, "cannot write the image") { throw refusal }
        switch kind {
        case .fifo, .characterDevice:
            try writeDirectly(bytes, to: path)
        default:   // a regular file, or nothing there yet (the refused kinds were thrown above)
            do throws(SystemError) {
                try bytes.withUnsafeBytes { (raw) throws(SystemError) in
                    try AtomicFileWriter.write(raw, to: path, createFolders: false)
                }
            } catch {
                throw failure(path, error.message)
            }
        }
    }

    /// Refuses, before anything is downloaded, an `--output` that `write(_:to:)` would refuse
    /// after: an empty path (a usage error), a folder, a block device or a socket, a symbolic link
    /// to nothing, a folder that does not exist or cannot be written, a name or a path too long for
    /// the file system. The data is not spent on an image that cannot be written. (What can change
    /// meanwhile is checked again when writing.)
    static func checkBeforeFetching(_ path: String) throws(CommandFailure) {
        guard !path.isEmpty else { throw CommandFailure.usage("--output: the path is empty") }
        guard path != "-" else { throw standardOutputRefused }
        let kind = FileKind(path: path, followingLinks: true)
        if let kind, refuses(kind) { throw refusal(path, kind) }
        if kind == .regular, let refusal = ArgumentPaths.replacementRefusal(path, "cannot write the image") { throw refusal }
        // A device or a FIFO is written to as it is; a regular file or a new one is replaced.
        guard kind == nil || kind == .regular else { return }
        if kind == nil, FileKind(path: path, followingLinks: false) == .symbolicLink {
            throw failure(path, "is a symbolic link to a missing file")
        }
        // The folder exists and can be written, the name and the path fit the file system.
        do {
            try AtomicFileWriter.checkWritable(path)
        } catch {
            throw failure(path, error.message)
        }
    }

    /// Why `--output -` is refused (a usage error, raised before anything is fetched).
    static let standardOutputMessage =
        "--output -: standard output carries the report; give a file name (or /dev/stdout with the report sent elsewhere)"
    /// `--output -` as a failure.
    static let standardOutputRefused = CommandFailure.usage(standardOutputMessage)

    private static func writeDirectly(_ bytes: ImageBytes, to path: String) throws(CommandFailure) {
        let fd = DescriptorReserve.admit(open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            if code == ENXIO { throw failure(path, "is a FIFO that no process reads; start the reader first") }
            throw failure(path, errnoText(code).lowercased())
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(path, errnoText(errno).lowercased()) }
        // Checked again on the descriptor: the path may have been swapped since the first look.
        guard let kind = FileKind(mode: info.st_mode), kind == .fifo || kind == .characterDevice else {
            throw failure(path, "changed while it was opened; nothing written")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        do throws(SystemError) {
            try bytes.withUnsafeBytes { (raw) throws(SystemError) in try AtomicFileWriter.writeAll(raw, to: fd, path: path) }
        } catch {
            throw failure(path, error.message)
        }
    }

    /// The kinds of target an image is never written to: writing an image over a disk, a folder
    /// or a socket is never what was meant.
    private static func refuses(_ kind: FileKind) -> Bool {
        kind == .directory || kind == .blockDevice || kind == .socket
    }

    private static func refusal(_ path: String, _ kind: FileKind) -> CommandFailure {
        failure(path, "is \(kind.article); the image can be written to a regular file, a character device or a FIFO")
    }

    private static func failure(_ path: String, _ message: String) -> CommandFailure {
        CommandFailure("\(path): cannot write the image: \(message)", status: .ioError)
    }
}
