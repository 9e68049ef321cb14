#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of the C library's message for `code` (`No such file or directory`).
package func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// The text of the C library's message for the current `errno`, in lower case, as it ends a
/// message (`cannot open the folder: no such file or directory`).
package func errnoText() -> String {
    errnoText(errno).lowercased()
}

/// `read(2)`, under a name no method shadows.
package func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
